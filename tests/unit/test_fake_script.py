"""The fake agent's pure half: script steps, command lines, hook selection and answers, and the keyboard."""

from __future__ import annotations

import pytest

from worker.fake.script import (
    CommandLine,
    KeyDecoder,
    KeyEvent,
    Step,
    denial,
    hook_commands,
    parse_command_line,
    parse_script,
    parse_step,
    project_dir_name,
    step_command,
    steps_in,
)


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("write notes.txt hello world", Step("write", "notes.txt", "hello world")),
        ("write a/b.md line one\\nline two", Step("write", "a/b.md", "line one\nline two")),
        ("write empty.txt", Step("write", "empty.txt", "")),
        ("read src/app.py", Step("read", "src/app.py")),
        ("commit Add the notes", Step("commit", "Add the notes")),
        ("ask Which colour: red or blue?", Step("ask", "Which colour: red or blue?")),
        ("run make test && echo ok", Step("run", "make test && echo ok")),
        ("say Looking at the code.", Step("say", "Looking at the code.")),
        ("sleep 0.5", Step("sleep", "0.5")),
        ("sleep -3", Step("sleep", "0.0")),
        ("sleep 99999", Step("sleep", "3600.0")),
        ("wait", Step("wait")),
        ("wait Need the API key.", Step("wait", "Need the API key.")),
        ("done", Step("done")),
        ("done Shipped it.", Step("done", "Shipped it.")),
        ("reply Postgres or SQLite?", Step("reply", "Postgres or SQLite?")),
        ("reply", Step("invalid", "reply", "reply needs an argument")),
        ("exit", Step("exit")),
        ("  commit   spaced out  ", Step("commit", "spaced out")),
        ("write", Step("invalid", "write", "write needs an argument")),
        ("commit", Step("invalid", "commit", "commit needs an argument")),
        ("read", Step("invalid", "read", "read needs an argument")),
        ("sleep soon", Step("invalid", "sleep soon", "sleep needs a number of seconds")),
        ("sleep inf", Step("invalid", "sleep inf", "sleep needs a number of seconds")),
        ("sleep nan", Step("invalid", "sleep nan", "sleep needs a number of seconds")),
        ("dance now", Step("invalid", "dance now", "unknown step 'dance'")),
        ("", Step("invalid", "", "unknown step ''")),
    ],
    ids=[
        "write",
        "write-newline-escape",
        "write-empty",
        "read",
        "commit",
        "ask",
        "run",
        "say",
        "sleep",
        "sleep-negative",
        "sleep-capped",
        "wait",
        "wait-text",
        "done",
        "done-text",
        "reply",
        "reply-no-text",
        "exit",
        "extra-spaces",
        "write-no-path",
        "commit-no-message",
        "read-no-path",
        "sleep-not-number",
        "sleep-infinite",
        "sleep-nan",
        "unknown-verb",
        "empty",
    ],
)
def test_parse_step(line: str, expected: Step) -> None:
    assert parse_step(line) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Please do the work.", []),
        ("Task:\nfake: write a.txt x\nsome prose\nfake: done\n", [Step("write", "a.txt", "x"), Step("done")]),
        ("  fake:   commit msg  ", [Step("commit", "msg")]),
        ("the line says fake: done in the middle", []),
        ("Fake: done\nFAKE: done", []),
        ("fake:wait", [Step("wait")]),
        ("fake: bogus", [Step("invalid", "bogus", "unknown step 'bogus'")]),
    ],
    ids=["none", "two-steps", "indented", "mid-line", "case-sensitive", "no-space", "invalid"],
)
def test_steps_in(text: str, expected: list[Step]) -> None:
    assert steps_in(text) == expected


@pytest.mark.parametrize(
    ("document", "expected"),
    [
        ('["write a.txt x", "done"]', [Step("write", "a.txt", "x"), Step("done")]),
        ("[]", []),
        ("{not json", [Step("invalid", "{not json", "script is not JSON: Expecting property name enclosed")]),
        ('{"steps": []}', [Step("invalid", '{"steps": []}', "script must be a JSON list of strings")]),
        ('["done", 3]', [Step("invalid", '["done", 3]', "script must be a JSON list of strings")]),
    ],
    ids=["steps", "empty", "not-json", "not-a-list", "not-strings"],
)
def test_parse_script(document: str, expected: list[Step]) -> None:
    steps = parse_script(document)
    assert [(s.verb, s.arg) for s in steps] == [(s.verb, s.arg) for s in expected]
    assert all(s.text.startswith(e.text) for s, e in zip(steps, expected, strict=True))


@pytest.mark.parametrize(
    ("step", "expected"),
    [
        (Step("commit", "Add notes"), 'git add -A && git commit -m "Add notes"'),
        (
            Step("commit", 'say "hi" for $5 `now` \\o/'),
            'git add -A && git commit -m "say \\"hi\\" for \\$5 \\`now\\` \\\\o/"',
        ),
        (Step("ask", "Which colour?"), 'ib ask "Which colour?"'),
        (Step("ask", "it's fine"), 'ib ask "it\'s fine"'),
        (Step("run", "echo 'a' | wc -c"), "echo 'a' | wc -c"),
    ],
    ids=["commit", "commit-special-characters", "ask", "ask-apostrophe", "run-verbatim"],
)
def test_step_command(step: Step, expected: str) -> None:
    assert step_command(step) == expected


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        ([], CommandLine()),
        (["do it"], CommandLine(prompt="do it")),
        (["--settings", "s.json", "--session-id", "abc", "do it"], CommandLine("s.json", "abc", "do it")),
        (["--settings=s.json", "--session-id=abc", "p"], CommandLine("s.json", "abc", "p")),
        (["--dangerously-skip-permissions", "--model", "opus", "the task"], CommandLine(prompt="the task")),
        (["--settings"], CommandLine()),
        (["--", "--not-an-option"], CommandLine(prompt="--not-an-option")),
    ],
    ids=["nothing", "prompt", "options", "equals-form", "unknown-options", "dangling-option", "double-dash"],
)
def test_parse_command_line(argv: list[str], expected: CommandLine) -> None:
    assert parse_command_line(argv) == expected


@pytest.mark.parametrize(
    ("cwd", "expected"),
    [
        ("/home/me/repo", "-home-me-repo"),
        ("/tmp/pytest-0/test_x0/.ittybitty/agent_1", "-tmp-pytest-0-test-x0--ittybitty-agent-1"),
    ],
    ids=["plain", "dots-and-underscores"],
)
def test_project_dir_name(cwd: str, expected: str) -> None:
    assert project_dir_name(cwd) == expected


def _settings(matcher: object, command: str = "c", **hook: object) -> dict[str, object]:
    group: dict[str, object] = {"hooks": [{"type": "command", "command": command, **hook}]}
    if matcher is not None:
        group["matcher"] = matcher
    return {"hooks": {"PreToolUse": [group]}}


@pytest.mark.parametrize(
    ("settings", "tool", "expected"),
    [
        (_settings(""), "Bash", [("c", 10.0)]),
        (_settings("*"), "Bash", [("c", 10.0)]),
        (_settings(None), "Bash", [("c", 10.0)]),
        (_settings("Bash"), "Bash", [("c", 10.0)]),
        (_settings("Bash"), "Read", []),
        (_settings("Edit|Write"), "Write", [("c", 10.0)]),
        (_settings("Edit|Write"), "Read", []),
        (_settings("Bas"), "Bash", []),
        (_settings("[unclosed"), "[unclosed", [("c", 10.0)]),
        (_settings("", timeout=3), "Bash", [("c", 3.0)]),
        (_settings("", command=""), "Bash", []),
        ({"hooks": {"PreToolUse": [{"hooks": [{"type": "prompt", "prompt": "p"}]}]}}, "Bash", []),
        ({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "s"}]}]}}, "Bash", []),
        ({"hooks": {"PreToolUse": "nonsense"}}, "Bash", []),
        ({"hooks": []}, "Bash", []),
        (None, "Bash", []),
        ([], "Bash", []),
    ],
    ids=[
        "empty-matcher",
        "star",
        "no-matcher",
        "exact",
        "exact-other-tool",
        "regex",
        "regex-other-tool",
        "whole-name-only",
        "bad-regex-literal",
        "own-timeout",
        "empty-command",
        "not-a-command-hook",
        "other-event",
        "event-not-a-list",
        "hooks-not-a-mapping",
        "no-settings",
        "settings-not-a-mapping",
    ],
)
def test_hook_commands_for_tools(settings: object, tool: str, expected: list[tuple[str, float]]) -> None:
    assert hook_commands(settings, "PreToolUse", tool) == expected


def test_hook_commands_for_events_without_tools_ignore_matchers() -> None:
    first = {"matcher": "Bash", "hooks": [{"type": "command", "command": "a"}]}
    second = {"hooks": [{"type": "command", "command": "b", "timeout": 1.5}]}
    settings = {"hooks": {"Stop": [first, second]}}
    assert hook_commands(settings, "Stop") == [("a", 10.0), ("b", 1.5)]


DENY = '{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny", '


@pytest.mark.parametrize(
    ("exit_code", "stdout", "stderr", "expected"),
    [
        (0, "", "", None),
        (0, "plain words", "", None),
        (0, DENY + '"permissionDecisionReason": "outside the worktree"}}', "", "outside the worktree"),
        (0, DENY + '"permissionDecisionReason": ""}}', "", "denied by a PreToolUse hook"),
        (0, '{"hookSpecificOutput": {"permissionDecision": "allow"}}', "", None),
        (0, '{"decision": "block", "reason": "no"}', "", "no"),
        (0, '{"decision": "approve"}', "", None),
        (0, "[1]", "", None),
        (2, "", "stay in your worktree\n", "stay in your worktree"),
        (2, "", "", "blocked by a PreToolUse hook"),
        (1, DENY[:20], "crashed", None),
    ],
    ids=[
        "silent",
        "text",
        "deny",
        "deny-no-reason",
        "allow",
        "legacy-block",
        "legacy-approve",
        "json-not-object",
        "exit-2",
        "exit-2-silent",
        "failed-hook",
    ],
)
def test_denial(exit_code: int, stdout: str, stderr: str, expected: str | None) -> None:
    assert denial(exit_code, stdout, stderr) == expected


def _decode(*chunks: bytes) -> tuple[list[KeyEvent], KeyDecoder]:
    decoder = KeyDecoder()
    events = [event for chunk in chunks for event in decoder.feed(chunk)]
    return [e for e in events if e.kind != "echo"], decoder


@pytest.mark.parametrize(
    ("chunks", "expected"),
    [
        ((b"hello\r",), [KeyEvent("submit", b"hello")]),
        ((b"hello\n",), [KeyEvent("submit", b"hello")]),
        ((b"one\rtwo\r",), [KeyEvent("submit", b"one"), KeyEvent("submit", b"two")]),
        ((b"\r", b"   \r"), [KeyEvent("key", b"Enter"), KeyEvent("key", b"Enter")]),
        ((b"\x1b[200~line 1\nline 2\x1b[201~\r",), [KeyEvent("submit", b"line 1\nline 2")]),
        ((b"\x1b[200~a\rb\r\nc\x1b[201~\r",), [KeyEvent("submit", b"a\nb\nc")]),
        ((b"\x1b[20", b"0~x\ny\x1b[2", b"01~", b"\r"), [KeyEvent("submit", b"x\ny")]),
        (
            (b"say: \x1b[200~\"q\" 'u' \xc3\xbc\x1b[201~!\r",),
            [KeyEvent("submit", b"say: \"q\" 'u' \xc3\xbc!")],
        ),
        ((b"\x1b[200~\x1b[201~\r",), [KeyEvent("key", b"Enter")]),
        ((b"ab\x7fc\r",), [KeyEvent("submit", b"ac")]),
        ((b"x\xc3\xbc\x7f\r",), [KeyEvent("submit", b"x")]),
        ((b"\x7f\x7fq\r",), [KeyEvent("submit", b"q")]),
        (
            (b"a\x1b[Ab\x1bOB\r",),
            [KeyEvent("key", b"Up"), KeyEvent("key", b"Down"), KeyEvent("submit", b"ab")],
        ),
        ((b"\x03",), [KeyEvent("interrupt")]),
        ((b"\x1bx\r",), [KeyEvent("interrupt"), KeyEvent("submit", b"x")]),
        ((b"\x04",), [KeyEvent("eof")]),
        ((b"a\x04\r",), [KeyEvent("submit", b"a")]),
        ((b"tab\there\x01\r",), [KeyEvent("submit", b"tabhere")]),
    ],
    ids=[
        "typed-cr",
        "typed-lf",
        "two-lines",
        "empty-enter-is-a-key",
        "paste-keeps-newlines",
        "paste-cr-becomes-lf",
        "paste-markers-split",
        "paste-inside-typing",
        "empty-paste",
        "backspace",
        "backspace-multibyte",
        "backspace-on-empty",
        "arrow-keys-are-keys-not-text",
        "ctrl-c",
        "escape-then-key",
        "ctrl-d-empty",
        "ctrl-d-with-text",
        "control-characters-dropped",
    ],
)
def test_key_decoder(chunks: tuple[bytes, ...], expected: list[KeyEvent]) -> None:
    events, decoder = _decode(*chunks)
    assert events == expected
    assert not decoder.escape_pending


def test_lone_escape_waits_for_what_follows() -> None:
    events, decoder = _decode(b"abc\x1b")
    assert events == []
    assert decoder.escape_pending
    assert decoder.flush_escape() == [KeyEvent("interrupt")]
    assert decoder.flush_escape() == []
    assert decoder.feed(b"\r") == [KeyEvent("submit", b"abc")]


def test_escape_followed_by_sequence_is_not_an_interrupt() -> None:
    decoder = KeyDecoder()
    decoder.feed(b"\x1b")
    assert decoder.feed(b"[B") == [KeyEvent("key", b"Down")]
    assert not decoder.escape_pending
    assert decoder.flush_escape() == []


def test_echo_shows_what_was_typed_and_pasted() -> None:
    decoder = KeyDecoder()
    echoed = [e.data for e in decoder.feed(b"hi\x1b[200~a\r\nb\x1b[201~\x7f") if e.kind == "echo"]
    assert echoed == [b"h", b"i", b"a\nb", b"\b \b"]
