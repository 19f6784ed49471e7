"""Text from outside is shown escaped on a terminal: control characters and bidi overrides (pure)."""

from __future__ import annotations

import pytest

from worker.terminal_text import printable


@pytest.mark.parametrize(
    ("text", "keep", "shown"),
    [
        ("plain title é ✓", "", "plain title é ✓"),
        ("\x1b[2Jcleared", "", "\\x1b[2Jcleared"),
        ("bell\x07 and del\x7f", "", "bell\\x07 and del\\x7f"),
        ("c1 csi \x9b2J", "", "c1 csi \\x9b2J"),
        ("a\nb\tc", "", "a\\x0ab\\x09c"),
        ("a\nb", "\n", "a\nb"),
        ("evil\u202etxt.exe", "", "evil\\u202etxt.exe"),
    ],
    ids=["plain", "escape", "bell-del", "c1", "newline-tab", "keep-newline", "bidi"],
)
def test_printable(text: str, keep: str, shown: str) -> None:
    assert printable(text, keep) == shown
