"""worker.conflicts.merge_tree and .overlap on what git prints: `git merge-tree --write-tree -z --stdin`
output captured from git 2.39 (binary files, renames, deletions, names with control characters and bytes
that are not UTF-8), conflict markers in a merged file, and the fingerprints that make each overlap
told once."""

from __future__ import annotations

from pathlib import Path

import pytest

from worker.conflicts.merge_tree import (
    MergeTreeOutputError,
    conflict_kind,
    parse_batch,
    parse_hunks,
    printable,
)
from worker.conflicts.overlap import Collision, FileOverlap, event_data, message, news, note, overlaps

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "merge-tree"
NOT_UTF8 = b"caf\xe9.txt".decode("utf-8", "surrogateescape")
NEWLINE_ESC = "new\nline\x1b.txt"

# fixture → [(clean, {path: (kind, stages, related)})] per merge
EXPECTED: dict[str, list[tuple[bool, dict[str, tuple[str, tuple[int, ...], tuple[str, ...]]]]]] = {
    "clean": [(True, {})],
    "six-kinds": [
        (
            False,
            {
                "a.py": ("content", (1, 2, 3), ()),
                "b.bin": ("binary", (1, 2, 3), ()),
                "gone.txt": ("modify/delete", (1, 2), ()),
                "new.txt": ("add/add", (2, 3), ()),
                "renA.txt": ("rename/delete", (1, 2), ("ren.txt",)),
                "we\tird.txt": ("content", (1, 2, 3), ()),
            },
        )
    ],
    "odd-names": [
        (False, {NOT_UTF8: ("add/add", (2, 3), ()), NEWLINE_ESC: ("add/add", (2, 3), ())}),
    ],
    "rename-rename": [
        (
            False,
            {
                "ren.txt": ("rename/rename", (1,), ("renD.txt", "renE.txt")),
                "renD.txt": ("rename/rename", (2,), ("ren.txt", "renE.txt")),
                "renE.txt": ("rename/rename", (3,), ("ren.txt", "renD.txt")),
            },
        )
    ],
}
EXPECTED["batch-of-four"] = [
    *EXPECTED["six-kinds"],
    *EXPECTED["clean"],
    *EXPECTED["odd-names"],
    *EXPECTED["rename-rename"],
]


@pytest.mark.parametrize("name", EXPECTED, ids=EXPECTED.keys())
def test_merge_tree_output_is_read_file_by_file(name: str) -> None:
    outcomes = parse_batch((FIXTURES / f"{name}.z").read_bytes())
    got = [
        (
            o.clean,
            {f.path: (f.kind, tuple(s.stage for s in f.stages), f.related) for f in o.files},
        )
        for o in outcomes
    ]
    assert got == EXPECTED[name]
    assert all(len(o.tree) == 40 for o in outcomes)


def test_textual_files_are_the_ones_with_markers() -> None:
    (outcome,) = parse_batch((FIXTURES / "six-kinds.z").read_bytes())
    textual = sorted(f.path for f in outcome.files if f.textual)
    assert textual == ["a.py", "new.txt", "we\tird.txt"]


BAD_OUTPUT = {
    "failed-merge": b"-1\x00",
    "garbage-stage-line": b"0\x00" + b"1" * 40 + b"\x00no tab here\x00\x00\x00",
    "truncated": b"0\x00",
    "bad-record": b"0\x00" + b"1" * 40 + b"\x00100644 " + b"2" * 40 + b" 2\ta\x00\x00x\x00",
}


@pytest.mark.parametrize("output", BAD_OUTPUT.values(), ids=BAD_OUTPUT.keys())
def test_output_it_cannot_read_raises_one_clear_error(output: bytes) -> None:
    with pytest.raises(MergeTreeOutputError):
        parse_batch(output)


def test_empty_output_is_no_merge() -> None:
    assert parse_batch(b"") == []


KINDS = {
    "auto-merging": ("Auto-merging", "Auto-merging a.py\n", None),
    "contents": ("CONFLICT (contents)", "CONFLICT (content): Merge conflict in a\n", "content"),
    "add-add-from-message": ("CONFLICT (contents)", "CONFLICT (add/add): Merge conflict in a\n", "add/add"),
    "binary-from-type": ("CONFLICT (binary)", "warning: Cannot merge binary files: b (A vs. B)\n", "binary"),
    "unknown-kind": (
        "CONFLICT (submodule lacks merge base)",
        "Failed to merge submodule s",
        "submodule lacks merge base",
    ),
}


@pytest.mark.parametrize(("kind_type", "text", "kind"), KINDS.values(), ids=KINDS.keys())
def test_conflict_kind(kind_type: str, text: str, kind: str | None) -> None:
    assert conflict_kind(kind_type, text) == kind


HUNKS = {
    "none": ("a\nb\n", []),
    "one": (
        "def f():\n<<<<<<< aaa\n    return 10\n=======\n    return 11\n>>>>>>> bbb\n\ndef g():\n",
        [(2, ("    return 10",), ("    return 11",))],
    ),
    "two-lines-count-ours-only": (
        "x\n<<<<<<< a\n1\n2\n=======\n3\n>>>>>>> b\ny\n<<<<<<< a\n4\n=======\n5\n6\n7\n>>>>>>> b\n",
        [(2, ("1", "2"), ("3",)), (5, ("4",), ("5", "6", "7"))],
    ),
    "diff3-base": (
        "<<<<<<< a\nours\n||||||| base\nold\n=======\ntheirs\n>>>>>>> b\n",
        [(1, ("ours",), ("theirs",))],
    ),
    "deleted-on-one-side": ("<<<<<<< a\n=======\ngone here\n>>>>>>> b\n", [(1, (), ("gone here",))]),
    "longer-markers": ("<<<<<<<<< a\nx\n=========\ny\n>>>>>>>>> b\n", [(1, ("x",), ("y",))]),
    "lookalikes-are-text": ("<<<<<<<x\n=======y\n", []),
    "unterminated": ("<<<<<<< a\nx\n=======\ny\n", []),
}


@pytest.mark.parametrize(("text", "hunks"), HUNKS.values(), ids=HUNKS.keys())
def test_hunks_from_conflict_markers(
    text: str, hunks: list[tuple[int, tuple[str, ...], tuple[str, ...]]]
) -> None:
    assert [(h.line, h.ours, h.theirs) for h in parse_hunks(text)] == hunks


PRINTABLE = {
    "plain": ("src/a.py", "src/a.py"),
    "tab": ("we\tird.txt", "we\\tird.txt"),
    "newline-and-escape": (NEWLINE_ESC, "new\\nline\\x1b.txt"),
    "not-utf8": (NOT_UTF8, "caf\ufffd.txt"),
    "backslash": ("a\\b", "a\\\\b"),
    "unicode-kept": ("café/ü.py", "café/ü.py"),
}


@pytest.mark.parametrize(("path", "shown"), PRINTABLE.values(), ids=PRINTABLE.keys())
def test_paths_print_on_one_line(path: str, shown: str) -> None:
    assert printable(path) == shown


def _hunk_overlap(ours: str, theirs: str, path: str = "a.py") -> FileOverlap:
    (hunk,) = parse_hunks(f"<<<<<<< x\n{ours}\n=======\n{theirs}\n>>>>>>> y\n")
    return FileOverlap(path, "content", (hunk,), ("1" * 40, "2" * 40))


def test_a_fingerprint_is_the_same_from_either_side_and_changes_with_the_overlap() -> None:
    one, other_side = _hunk_overlap("return 10", "return 11"), _hunk_overlap("return 11", "return 10")
    assert one.fingerprint() == other_side.fingerprint()
    assert one.fingerprint() != _hunk_overlap("return 12", "return 11").fingerprint()
    binary = FileOverlap("b.bin", "binary", (), ("1" * 40, "2" * 40))
    assert binary.fingerprint() == FileOverlap("b.bin", "binary", (), ("2" * 40, "1" * 40)).fingerprint()
    assert binary.fingerprint() != FileOverlap("b.bin", "binary", (), ("3" * 40, "1" * 40)).fingerprint()


def test_news_tells_new_and_changed_overlaps_and_drops_the_gone() -> None:
    a, b = _hunk_overlap("x", "y", "a.py"), _hunk_overlap("p", "q", "b.py")
    fresh, gone = news({"a.py": a.fingerprint(), "old.py": "f"}, (a, b))
    assert (fresh, gone) == ((b,), ["old.py"])
    changed = _hunk_overlap("x2", "y", "a.py")
    assert news({"a.py": a.fingerprint()}, (changed,)) == ((changed,), [])
    assert news({"a.py": a.fingerprint()}, (a,)) == ((), [])


def test_overlaps_keep_both_sides_of_each_file() -> None:
    (outcome,) = parse_batch((FIXTURES / "six-kinds.z").read_bytes())
    found = {f.path: f for f in overlaps(outcome.files, {})}
    assert found["gone.txt"].sides == ("5ea2ed416fbd4a4cbe227b75fe255dd7fa6bd4d6",)
    assert len(found["b.bin"].sides) == 2


def test_event_and_note_name_both_sides_the_files_and_the_hunks() -> None:
    files = (_hunk_overlap("    return 10", "    return 11"), FileOverlap(NEWLINE_ESC, "binary", (), ("1",)))
    collision = Collision("agent-b", "agent-a", "agent", files)
    data = event_data(collision)
    assert data["agents"] == ["agent-b", "agent-a"]
    assert data["other_agent"] == "agent-a"
    assert data["files"] == ["a.py", "new\\nline\\x1b.txt"]
    assert data["conflicts"][0]["hunks"] == [
        {"line": 1, "ours": ["    return 10"], "theirs": ["    return 11"]}
    ]
    assert "\n" not in message(collision)
    assert "agent agent-a" in message(collision)
    told = note(collision)
    assert "agent agent-a" in told
    assert "a.py: around line 1" in told
    assert "yours:  return 10" in told
    assert "new\\nline\\x1b.txt: binary" in told


def test_against_the_target_branch_names_the_branch() -> None:
    collision = Collision("agent-b", "main", "branch", (_hunk_overlap("a", "b"),))
    assert event_data(collision)["agents"] == ["agent-b"]
    assert event_data(collision)["branch"] == "main"
    assert "branch main" in message(collision)
    assert "the main branch" in note(collision)


def test_long_hunks_are_cut_for_reading() -> None:
    ours = "\n".join(f"line {i}" for i in range(20))
    data = event_data(Collision("a", "b", "agent", (_hunk_overlap(ours, "x"),)))
    shown = data["conflicts"][0]["hunks"][0]["ours"]
    assert len(shown) == 7
    assert shown[-1] == "… 14 more line(s)"
