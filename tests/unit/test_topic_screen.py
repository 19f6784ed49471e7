"""The README's Telegram picture as a screen (docs.pictures.topic_screen): each message under the bot's name,
wrapped to the width, its buttons as boxes in rows under it, the tapped one marked; nothing in a message
can restyle the screen. And the script that draws it refuses a bad --out in one line, before it runs."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from docs.pictures.topic_screen import BUTTON, PRESSED, RESET, Shown, topic_screen, wrapped

ROOT = Path(__file__).resolve().parents[2]
ESCAPE = re.compile(r"\x1b\[[0-9;]*m")


def _plain(lines: list[str]) -> list[str]:
    return [ESCAPE.sub("", line) for line in lines]


WRAPS = [
    ("short", "a line", 20, ["a line"]),
    ("at-a-space", "one two three four", 9, ["one two", "three", "four"]),
    ("keeps-its-indent", "  → Output of a long command", 14, ["  → Output of", "  a long", "  command"]),
    ("a-wide-glyph-takes-two-cells", "🔐 ab cd", 6, ["🔐 ab", "cd"]),
    ("empty-lines-stay", "a\n\nb", 10, ["a", "", "b"]),
    ("a-long-word-is-cut", "abcdefghij", 4, ["abcd", "efgh", "ij"]),
]


@pytest.mark.parametrize(("text", "width", "lines"), [w[1:] for w in WRAPS], ids=[w[0] for w in WRAPS])
def test_a_message_is_wrapped_to_the_screen(text: str, width: int, lines: list[str]) -> None:
    assert wrapped(text, width) == lines


def test_each_message_stands_under_the_bot_with_its_buttons_in_rows() -> None:
    messages = [
        Shown("→ totals spawned"),
        Shown("🔐 totals asks to use Bash\nls", (("Allow", "Always allow", "Deny"),), pressed="Allow"),
        Shown("✓ totals completed", (("Diff", "Merge"), ("Look",))),
    ]
    lines = topic_screen("totals [shop]", "a forum topic", messages, "ittybus bot", 40)
    assert _plain(lines) == [
        "# totals [shop]  (a forum topic)",
        "",
        "ittybus bot",
        "  → totals spawned",
        "",
        "ittybus bot",
        "  🔐 totals asks to use Bash",
        "  ls",
        "   Allow    Always allow    Deny ",
        "",
        "ittybus bot",
        "  ✓ totals completed",
        "   Diff    Merge ",
        "   Look ",
    ]
    assert lines[8] == f"  {PRESSED} Allow {RESET}  {BUTTON} Always allow {RESET}  {BUTTON} Deny {RESET}"


def test_a_message_cannot_restyle_the_screen() -> None:
    sneaky = Shown("red\x1b[31m text\tand a tab", (("b\x1b[0m",),))
    lines = topic_screen("t\x1b[31m", "n", [sneaky], "bot", 40)
    assert "\x1b[31m" not in "".join(lines)
    assert _plain(lines)[3:] == ["  red [31m text and a tab", "   b [0m "]


def test_an_out_file_in_no_folder_is_refused_before_the_run(tmp_path: Path) -> None:
    out = tmp_path / "missing" / "topic.png"
    run = subprocess.run(
        [sys.executable, "-m", "docs.pictures.telegram_topic", "--out", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert run.returncode == 2
    assert run.stderr.splitlines()[-1] == (
        f"python -m docs.pictures.telegram_topic: error: --out {out}: no folder {out.parent} to write it in"
    )
    assert not out.parent.exists()
