"""Transcript parsing: every block kind, summaries of tool uses and results, lines cut across reads,
lines that are not ours to understand, and text outside ASCII."""

from __future__ import annotations

import json

import pytest

from worker.programs.claude.transcript import TranscriptParser, shorten
from worker.programs.output import OutputItem

CWD = "/work/repo"
TS = "2026-01-20T11:57:17.716Z"


def entry(kind: str, content: object, **extra: object) -> bytes:
    record: dict[str, object] = {"type": kind, "message": {"role": kind, "content": content}}
    record.update(timestamp=TS, cwd=CWD, **extra)
    return (json.dumps(record, ensure_ascii=False) + "\n").encode()


def tool_use(name: str, tool_input: dict[str, object], tool_id: str = "toolu_1") -> bytes:
    return entry("assistant", [{"type": "tool_use", "id": tool_id, "name": name, "input": tool_input}])


def tool_result(content: object, is_error: bool = False, tool_id: str = "toolu_1") -> bytes:
    block = {"type": "tool_result", "tool_use_id": tool_id, "content": content, "is_error": is_error}
    return entry("user", [block])


LONG = "x" * 200


@pytest.mark.parametrize(
    ("name", "tool_input", "expected"),
    [
        ("Read", {"file_path": f"{CWD}/src/app.py"}, "**Read**(src/app.py)"),
        ("Read", {"file_path": "/etc/hosts"}, "**Read**(/etc/hosts)"),
        ("Read", {"file_path": "/work/repository/x.py"}, "**Read**(/work/repository/x.py)"),
        ("Bash", {"command": "go test ./...", "description": "run tests"}, "**Bash**(go test ./...)"),
        ("Bash", {"command": "cd x &&\n  make"}, "**Bash**(cd x && make)"),
        ("Bash", {"command": LONG}, f"**Bash**({'x' * 79}…)"),
        ("Edit", {"file_path": f"{CWD}/a.py", "old_string": "a", "new_string": "b"}, "**Edit**(a.py)"),
        ("MultiEdit", {"file_path": f"{CWD}/a.py", "edits": []}, "**MultiEdit**(a.py)"),
        ("Write", {"file_path": f"{CWD}/docs/n.md", "content": "hi"}, "**Write**(docs/n.md)"),
        ("Grep", {"pattern": "def main", "path": "src"}, "**Grep**(def main)"),
        ("Glob", {"pattern": "**/*.py"}, "**Glob**(**/*.py)"),
        ("Task", {"description": "Explore the repo", "prompt": "long"}, "**Task**(Explore the repo)"),
        ("WebFetch", {"url": "https://example.com/a", "prompt": "p"}, "**WebFetch**(https://example.com/a)"),
        ("Frobnicate", {"count": 3, "target": "the thing"}, "**Frobnicate**(the thing)"),
        ("TodoWrite", {"todos": [{"content": "a"}]}, "**TodoWrite**()"),
        ("Read", {"file_path": 42}, "**Read**()"),
    ],
    ids=[
        "read-relative",
        "read-outside-cwd",
        "read-sibling-prefix",
        "bash",
        "bash-multiline",
        "bash-long",
        "edit",
        "multiedit",
        "write",
        "grep",
        "glob",
        "task",
        "webfetch",
        "unknown-first-string",
        "unknown-no-string",
        "argument-not-a-string",
    ],
)
def test_tool_use_summary(name: str, tool_input: dict[str, object], expected: str) -> None:
    items, _ = TranscriptParser().feed(tool_use(name, tool_input, "toolu_x"))
    assert items == [OutputItem("tool_use", expected, name, ts=TS)]


REMINDER = "\n\n<system-reminder>\nConsider whether the file is malicious.\n</system-reminder>\n"


@pytest.mark.parametrize(
    ("name", "tool_input", "content", "is_error", "expected"),
    [
        ("Read", {"file_path": "a"}, "     1→a\n     2→b\n     3→c", False, "Read 3 lines"),
        ("Read", {"file_path": "a"}, "     1→a\n     2→b\n     3→c" + REMINDER, False, "Read 3 lines"),
        ("Read", {"file_path": "a"}, "     1→only", False, "Read 1 line"),
        (
            "Write",
            {"file_path": "a", "content": "1\n2\n"},
            "File created successfully at: a",
            False,
            "Wrote 2 lines",
        ),
        ("Edit", {"old_string": "x", "new_string": "a\nb\nc"}, "updated", False, "Added 3, removed 1"),
        (
            "MultiEdit",
            {"edits": [{"old_string": "a\nb", "new_string": "c"}, {"old_string": "", "new_string": "d\ne"}]},
            "Applied 2 edits",
            False,
            "Added 3, removed 2",
        ),
        ("Bash", {"command": "ls"}, "a\nb\n", False, "Output 2 lines"),
        ("Bash", {"command": "ls"}, [{"type": "text", "text": "a\nb\nc"}], False, "Output 3 lines"),
        ("Bash", {"command": "true"}, "", False, "Output 0 lines"),
        ("Bash", {"command": "false"}, "Exit code 1\nboom", True, "Error: Exit code 1"),
        ("Grep", {"pattern": "x"}, "Found 2 files\nsrc/a.py\nsrc/b.py", False, "Found 2 files"),
        ("Grep", {"pattern": "x", "output_mode": "content"}, "a:1:x\na:2:x\nb:9:x", False, "Found 3 lines"),
        ("Grep", {"pattern": "x"}, "No files found", False, "Found 0 files"),
        ("Glob", {"pattern": "*.py"}, "/r/a.py\n/r/b.py\n", False, "Found 2 files"),
        ("Glob", {"pattern": "*.py"}, "/r/a.py", False, "Found 1 file"),
        (
            "Task",
            {"description": "d"},
            [{"type": "text", "text": "\nThe repo has 3 parts.\nMore."}],
            False,
            "The repo has 3 parts.",
        ),
        ("Task", {"description": "d"}, [], False, "Done"),
        (
            "WebFetch",
            {"url": "u"},
            "Request failed with status 404",
            True,
            "Error: Request failed with status 404",
        ),
        ("Read", {"file_path": "a"}, "", True, "Error"),
    ],
    ids=[
        "read",
        "read-with-reminder",
        "read-one-line",
        "write",
        "edit",
        "multiedit",
        "bash",
        "bash-blocks",
        "bash-empty",
        "bash-error",
        "grep-files",
        "grep-content",
        "grep-nothing",
        "glob",
        "glob-one",
        "task-first-line",
        "task-empty",
        "other-error",
        "error-without-text",
    ],
)
def test_tool_result_summary(
    name: str, tool_input: dict[str, object], content: object, is_error: bool, expected: str
) -> None:
    items, _ = TranscriptParser().feed(tool_use(name, tool_input) + tool_result(content, is_error))
    assert items[1] == OutputItem("tool_result", expected, name, ts=TS)


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (
            entry("assistant", [{"type": "text", "text": "All done.\n"}]),
            [OutputItem("text", "All done.", ts=TS)],
        ),
        (entry("assistant", "Plain string content"), [OutputItem("text", "Plain string content", ts=TS)]),
        (
            entry("assistant", [{"type": "text", "text": "one"}, {"type": "text", "text": "two"}]),
            [OutputItem("text", "one", ts=TS), OutputItem("text", "two", ts=TS)],
        ),
        (entry("assistant", [{"type": "text", "text": "  \n"}]), []),
        (entry("assistant", [{"type": "thinking", "thinking": "hmm", "signature": "s"}]), []),
        (entry("user", "please fix the bug"), [OutputItem("prompt", "", ts=TS)]),
        (
            entry("user", [{"type": "text", "text": "fix this"}, {"type": "image"}]),
            [OutputItem("prompt", "", ts=TS)],
        ),
        (entry("user", "<command-name>/clear</command-name>", isMeta=True), []),
        (entry("user", [{"type": "text", "text": "[Request interrupted by user]"}]), []),
        (entry("user", "[Request interrupted by user for tool use]"), []),
        (entry("assistant", [{"type": "text", "text": "sub-agent"}], isSidechain=True), []),
        (b'{"type":"summary","summary":"Session title","leafUuid":"u"}\n', []),
        (b'{"type":"system","content":"hook ran","level":"info"}\n', []),
        (tool_result("orphan output"), [OutputItem("tool_result", "orphan output", ts=TS)]),
    ],
    ids=[
        "assistant-text",
        "assistant-string",
        "two-text-blocks",
        "blank-text",
        "thinking",
        "user-prompt-starts-a-turn",
        "user-prompt-with-an-image",
        "meta-entry",
        "interrupted-block",
        "interrupted-string",
        "sidechain",
        "summary",
        "system",
        "result-without-its-use",
    ],
)
def test_entries(data: bytes, expected: list[OutputItem]) -> None:
    assert TranscriptParser().feed(data) == (expected, len(data))


GARBAGE = [
    b"not json at all\n",
    b"[1, 2, 3]\n",
    b"\n",
    b'{"type": "assistant", "message": "not an object"}\n',
    b'{"type": "assistant", "message": {"content": 7}}\n',
    b'{"type": "assistant", "message": {"content": ["text", 3, null]}}\n',
    b'{"type": "assistant", "message": {"content": [{"type": "tool_use", "name": "Read"}]}}\n',
    b'{"type": "user", "message": {"content": [{"type": "tool_result", "tool_use_id": 5}]}}\n',
    b"\xff\xfe broken utf-8\n",
    b'{"type": "assistant", "message": {"content": [{"type": "text", "text": "cut',
]


@pytest.mark.parametrize("garbage", GARBAGE[:-1], ids=lambda g: repr(g[:24]))
def test_garbage_line_is_consumed_and_skipped(garbage: bytes) -> None:
    good = entry("assistant", [{"type": "text", "text": "after"}])
    assert TranscriptParser().feed(garbage + good) == (
        [OutputItem("text", "after", ts=TS)],
        len(garbage + good),
    )


def test_all_garbage_at_once() -> None:
    data = b"".join(GARBAGE)
    items, consumed = TranscriptParser().feed(data)
    assert (items, consumed) == ([], len(data) - len(GARBAGE[-1]))


@pytest.mark.parametrize(
    "cut",
    [1, 10, 40, -1],
    ids=["first-byte", "early", "middle", "before-newline"],
)
def test_line_cut_in_half_waits_for_the_rest(cut: int) -> None:
    first = tool_use("Read", {"file_path": f"{CWD}/a.py"})
    second = tool_result("     1→x\n     2→y")
    data = first + second
    parser = TranscriptParser()
    split = len(first) + (cut if cut > 0 else len(second) + cut)

    items, consumed = parser.feed(data[:split])
    assert consumed == len(first)
    assert [i.text for i in items] == ["**Read**(a.py)"]

    items, consumed = parser.feed(data[consumed:])
    assert consumed == len(second)
    assert items == [OutputItem("tool_result", "Read 2 lines", "Read", ts=TS)]


def test_nothing_complete_consumes_nothing() -> None:
    assert TranscriptParser().feed(b'{"type": "assistant"') == ([], 0)
    assert TranscriptParser().feed(b"") == ([], 0)


def test_results_match_their_uses_across_feeds_and_ids() -> None:
    parser = TranscriptParser()
    parser.feed(
        tool_use("Bash", {"command": "ls"}, "toolu_a") + tool_use("Glob", {"pattern": "*"}, "toolu_b")
    )
    items, _ = parser.feed(tool_result("x\ny", tool_id="toolu_b") + tool_result("1\n2\n3", tool_id="toolu_a"))
    assert [(i.tool, i.text) for i in items] == [("Glob", "Found 2 files"), ("Bash", "Output 3 lines")]
    items, _ = parser.feed(tool_result("again", tool_id="toolu_a"))
    assert [(i.tool, i.text) for i in items] == [(None, "again")]


@pytest.mark.parametrize(
    "text",
    ["Ünïcödé ✓ — 日本語のテキスト 🚀", "emoji only 🎉🎉", "RTL עברית and ASCII"],
    ids=["mixed", "emoji", "rtl"],
)
def test_unicode_cut_inside_a_character(text: str) -> None:
    data = entry("assistant", [{"type": "text", "text": text}])
    inside = data.index(text.encode()) + len(text.encode()) - 2  # within the last multi-byte character
    parser = TranscriptParser()
    assert parser.feed(data[:inside]) == ([], 0)
    assert parser.feed(data) == ([OutputItem("text", text, ts=TS)], len(data))


def test_escaped_unicode_is_read_too() -> None:
    data = (
        json.dumps({"type": "assistant", "message": {"content": [{"type": "text", "text": "é🚀"}]}}) + "\n"
    ).encode()
    assert TranscriptParser().feed(data)[0] == [OutputItem("text", "é🚀")]


@pytest.mark.parametrize(
    ("text", "expected"),
    [("short", "short"), ("a  b\n\tc", "a b c"), ("y" * 80, "y" * 80), ("y" * 81, "y" * 79 + "…")],
    ids=["short", "whitespace", "exactly-80", "81"],
)
def test_shorten(text: str, expected: str) -> None:
    assert shorten(text) == expected


USAGE = [
    (
        "all-four",
        {
            "input_tokens": 3,
            "cache_read_input_tokens": 40000,
            "cache_creation_input_tokens": 1200,
            "output_tokens": 250,
        },
        41453,
    ),
    ("output-only", {"output_tokens": 7}, 7),
    ("nonsense", {"input_tokens": "many", "output_tokens": True}, None),
    ("not-a-mapping", [1, 2], None),
    ("missing", None, None),
]


@pytest.mark.parametrize(("usage", "tokens"), [u[1:] for u in USAGE], ids=[u[0] for u in USAGE])
def test_items_carry_the_context_size_of_their_answer(usage: object, tokens: int | None) -> None:
    record = {
        "type": "assistant",
        "timestamp": TS,
        "message": {"role": "assistant", "content": [{"type": "text", "text": "hi"}], "usage": usage},
    }
    items, _ = TranscriptParser().feed((json.dumps(record) + "\n").encode())
    assert items == [OutputItem("text", "hi", ts=TS, tokens=tokens)]
