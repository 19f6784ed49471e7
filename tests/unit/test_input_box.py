"""Whether a message just sent still sits in the input box (Enter taken by a completion menu)."""

from __future__ import annotations

import pytest

from worker.tmux.input_box import input_text, still_typed

RULE = "─" * 60


def _pane(box: str) -> str:
    return f"● Hi.\n  WAITING\n{RULE}\n❯ {box}\n{RULE}\n  ⏸ manual mode on · ? for shortcuts\n"


@pytest.mark.parametrize(
    ("pane", "text", "stuck"),
    [
        (_pane(""), "look at @src/app.py", False),
        (_pane("look at @src/app.py "), "look at @src/app.py", True),
        (_pane("[Pasted text #1 +40 lines]"), "a\n" * 40, True),
        (_pane("Resend your message to try again"), "look at @src/app.py", False),  # a placeholder
        ("no input box at all\n", "x", False),
        (f"⏺ ok\n{RULE}\n> -n is the flag\n", "-n is the flag", True),  # the fake agent's box
    ],
    ids=["submitted", "completion-took-enter", "paste", "placeholder", "no-box", "fake-agent"],
)
def test_still_typed(pane: str, text: str, stuck: bool) -> None:
    assert still_typed(pane, text) is stuck


def test_input_text() -> None:
    assert input_text(_pane("half typed")) == "half typed"
    assert input_text("nothing\n") is None
