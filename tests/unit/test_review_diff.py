"""Review pictures: `git diff` parsed into files and hunks with old and new line numbers, long lines wrapped
for a narrow screen, and each file drawn as a PNG of the right width."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from PIL import Image
from rich.style import Style

from bot.render.review_render import (
    Shown,
    caption,
    comment_of,
    file_list,
    noted,
    requested,
    shown_from,
    staleness,
)
from bus.inbox.review_prompt import Comment, changes_prompt
from worker.review.diff_files import FileDiff, parse_diff, printable, unquote
from worker.review.diff_picture import WIDTH, file_rows, lexer_for, render_file, wrap
from worker.review.review import review_of
from worker.tmux.screenshot import PADDING, fonts

MIXED = (Path(__file__).parents[1] / "fixtures" / "diffs" / "mixed.diff").read_text()


def _files() -> dict[str, FileDiff]:
    return {f.path: f for f in parse_diff(MIXED)}


def test_every_file_with_its_status_and_counts() -> None:
    files = _files()
    summary = {path: (f.status, f.binary, f.added, f.removed) for path, f in files.items()}
    assert summary == {
        "a.py": ("modified", False, 2, 1),
        "ctl\tname\a.txt": ("added", False, 1, 0),
        "gone.txt": ("deleted", False, 0, 1),
        "img.bin": ("modified", True, 0, 0),
        "new.py": ("added", False, 1, 0),
        "new_name.md": ("renamed", False, 0, 0),
        "tab\\there.txt": ("modified", False, 1, 1),
    }
    assert files["new_name.md"].old_path == "old_name.md"


def test_old_and_new_line_numbers() -> None:
    lines = [(d.kind, d.old, d.new, d.text) for d in _files()["a.py"].hunks[0].lines]
    assert lines == [
        (" ", 1, 1, "one"),
        ("-", 2, None, "two"),
        ("+", None, 2, "TWO"),
        (" ", 3, 3, "three"),
        (" ", 4, 4, "four"),
        ("+", None, 5, "five"),
    ]
    deleted = _files()["gone.txt"].hunks[0].lines
    assert [(d.kind, d.old, d.new) for d in deleted] == [("-", 1, None)]


def test_no_newline_marker_is_not_a_line_of_the_file() -> None:
    lines = _files()["new.py"].hunks[0].lines
    assert [(d.kind, d.new) for d in lines] == [("+", 1), (" ", None)]


@pytest.mark.parametrize(
    ("quoted", "plain"),
    [
        ("plain.txt", "plain.txt"),
        ('"a/tab\\there"', "a/tab\there"),
        ('"caf\\303\\251"', "café"),
        ('"back\\\\slash"', "back\\slash"),
    ],
    ids=["unquoted", "tab", "octal-utf8", "backslash"],
)
def test_unquote(quoted: str, plain: str) -> None:
    assert unquote(quoted) == plain


def test_printable_shows_control_characters_as_escapes() -> None:
    assert printable("ctl\tname\a.txt") == "ctl\\tname\\x07.txt"


def test_digest_follows_the_change() -> None:
    before = _files()["a.py"].digest
    after = {f.path: f for f in parse_diff(MIXED.replace("+five", "+FIVE"))}["a.py"].digest
    assert before != after and _files()["a.py"].digest == before


@pytest.mark.parametrize(
    ("text", "width", "rows"),
    [
        ("abcdef", 3, ["abc", "def"]),
        ("abcdefg", 3, ["abc", "def", "g"]),
        ("ab漢字", 3, ["ab", "漢", "字"]),  # a wide character never straddles two rows
        ("", 5, [""]),
    ],
    ids=["exact", "remainder", "wide", "empty"],
)
def test_wrap(text: str, width: int, rows: list[str]) -> None:
    wrapped = wrap([(text, Style())], width)
    assert ["".join(t for t, _ in row) for row in wrapped] == rows


def test_long_lines_wrap_under_their_line_number() -> None:
    diff = parse_diff(
        "diff --git a/x.py b/x.py\n--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a\n+" + "y" * 100 + "\n"
    )[0]
    rows, shown = file_rows(diff)
    texts = ["".join(t for t, _ in row) for row in rows]
    assert all(len(t) <= WIDTH for t in texts)
    assert texts[1].startswith("  1     - a")
    assert texts[2].startswith("      1 + yyy") and texts[3] == " " * 10 + "y" * 50
    assert (shown.first, shown.last, shown.omitted) == (1, 1, 0)


def test_a_long_file_is_capped_and_counted() -> None:
    body = "".join(f"+line {i}\n" for i in range(1, 1001))
    diff = parse_diff(
        f"diff --git a/big.txt b/big.txt\n--- /dev/null\n+++ b/big.txt\n@@ -0,0 +1,1000 @@\n{body}"
    )[0]
    picture = render_file(diff, max_lines=400)
    assert (picture.first, picture.last, picture.omitted) == (1, 400, 600)
    rows, _ = file_rows(diff, max_lines=400)
    assert "".join(t for t, _ in rows[-1]) == "… 600 more lines"
    image = Image.open(io.BytesIO(picture.png))
    assert image.size[0] == WIDTH * fonts().cell_width + 2 * PADDING


def test_code_is_highlighted() -> None:
    diff = _files()["a.py"]
    python = parse_diff(MIXED.replace("+five", "+def five(): return 'x'"))[0]
    colours = {style.color for row in file_rows(python)[0] for _, style in row if style.color}
    assert len(colours) > len({style.color for row in file_rows(diff)[0] for _, style in row if style.color})


def test_review_reply_pictures_text_files_only() -> None:
    reply = review_of(MIXED)
    with_picture = {f["path"] for f in reply["files"] if "picture" in f}
    assert with_picture == {"a.py", "ctl\\tname\\x07.txt", "gone.txt", "new.py", "tab\\there.txt"}
    assert "document" not in reply


def test_a_huge_diff_goes_as_a_document() -> None:
    body = "".join(f"+line {i}\n" for i in range(1, 10001))
    text = f"diff --git a/big.txt b/big.txt\n--- /dev/null\n+++ b/big.txt\n@@ -0,0 +1,10000 @@\n{body}"
    reply = review_of(text)
    assert reply["document"] == text and not any("picture" in f for f in reply["files"])
    assert reply["files"][0]["added"] == 10000


def test_file_list_marks_binary_renamed_deleted() -> None:
    listed = file_list("agent-1", review_of(MIXED, pictures=False)["files"], as_document=False)
    assert "binary  img.bin" in listed
    assert "new_name.md (renamed from old_name.md)" in listed
    assert "−1  gone.txt (deleted)" in listed
    assert "ctl\\tname\\x07.txt (added)" in listed
    assert "\t" not in listed and "\a" not in listed


def test_a_reply_becomes_the_prompt_and_notices_a_change() -> None:
    files = review_of(MIXED, pictures=False)["files"]
    digest = next(f["digest"] for f in files if f["path"] == "a.py")
    shown = Shown("agent-1", "a.py", 1, 5, digest)
    assert shown_from(shown.anchor()) == shown
    assert comment_of(shown, "why TWO?", None) == Comment("a.py", 1, 5, "why TWO?")
    assert staleness(shown, files) is None
    changed = review_of(MIXED.replace("+five", "+six"), pictures=False)["files"]
    assert staleness(shown, changed) == "a.py changed since that picture was sent"
    assert (
        staleness(Shown("agent-1", "other.py", 1, 2, "x"), files)
        == "other.py is no longer in agent-1's change"
    )


@pytest.mark.parametrize("anchor", ["review:", "review:{}", "review:[1]", 'review:{"agent": 1}'])
def test_a_broken_record_is_no_record(anchor: str) -> None:
    assert shown_from(anchor) is None


@pytest.mark.parametrize(
    ("path", "language"),
    [("pkg/a.py", "Python"), ("Makefile", "Makefile"), ("README.md", "Markdown"), ("x.unknown", "Text only")],
    ids=["by-suffix", "by-name", "markdown", "unknown-is-plain"],
)
def test_lexer_for(path: str, language: str) -> None:
    assert lexer_for(path).name == language


def test_a_very_long_path_keeps_its_end_in_the_caption() -> None:
    entry = {"path": "d/" * 600 + "end.py"}
    shown = caption(entry, {"first": 1, "last": 2, "omitted": 0})
    assert len(shown) < 1024 and "…" in shown and "end.py</code> · lines 1–2" in shown


def test_comments_of_a_review_become_one_prompt_naming_each_file_and_lines() -> None:
    comments = [
        Comment("calc.py", 1, 2, "use sum() here"),
        Comment(
            "notes.txt",
            3,
            3,
            "a typo\nand a second line",
            stale="notes.txt changed since that picture was sent",
        ),
        Comment("calc.py", 7, 9, "  no docstring  "),
    ]
    assert changes_prompt(comments) == (
        "Changes requested on your work (3 comments from the review of your diff):\n"
        "1. about `calc.py` (lines 1–2 as shown): use sum() here\n"
        "2. about `notes.txt` (lines 3–3 as shown; the file has changed since): a typo\n"
        "   and a second line\n"
        "3. about `calc.py` (lines 7–9 as shown): no docstring\n"
        "Address each of them, then commit."
    )
    assert changes_prompt(comments[:1]).startswith("Changes requested on your work (1 comment from")


def test_what_the_person_reads_about_comments() -> None:
    assert noted("agent-1", 1, None) == (
        "✍ 1 comment waiting for agent-1: press ✎ Request changes under the file list to send them."
    )
    stale = noted("agent-1", 2, "a.py changed since that picture was sent")
    assert stale.startswith("⚠ a.py changed since that picture was sent: the comment is kept as written")
    assert "2 comments waiting" in stale
    assert requested("agent-1", 2) == "✎ Changes requested from agent-1: 2 comments sent as one prompt."
