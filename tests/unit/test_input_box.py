"""Whether a message just sent still sits in the input box (Enter taken by a completion menu)."""

from __future__ import annotations

import pytest

from worker.tmux.input_box import arriving, input_text, still_typed

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
    assert still_typed(input_text(pane), text) is stuck


def test_a_long_paste_is_its_placeholder_in_either_program() -> None:
    assert still_typed("[Pasted Text: 50 lines]", "a\n" * 50)  # Gemini CLI's
    assert still_typed("[Pasted text #1 +40 lines]", "a\n" * 40)  # Claude Code's
    assert not still_typed("", "a")
    assert not still_typed(None, "a")


def test_input_text() -> None:
    assert input_text(_pane("half typed")) == "half typed"
    assert input_text("nothing\n") is None


@pytest.mark.parametrize(
    ("box", "text", "coming"),
    [
        ("w", "what was the codeword? say it", True),  # Gemini CLI drawing typed keys one by one
        ("what was the code", "what was the codeword? say it", True),
        ("what was the codeword? s", "what was the codeword? say it", False),  # enough of it: it is there
        ("ye", "yes", True),
        ("yes", "yes", False),
        ("", "yes", False),
        (None, "yes", False),
        ("something else", "yes", False),
        ("x", "yes", False),
    ],
)
def test_a_message_still_being_drawn_is_arriving(box: str | None, text: str, coming: bool) -> None:
    """An Enter pressed while the box shows only the start of the message would send that start."""
    assert arriving(box, text) is coming
