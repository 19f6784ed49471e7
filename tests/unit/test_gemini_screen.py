"""Gemini CLI's screen read by worker/tmux/gemini_screen.py, table-tested on real captures of 0.61.0 at
80, 100 and 200 columns (tests/fixtures/gemini-0.61.0: the state is the file name's text before the first
hyphen), the dialogs' options and the keys that answer them, and hand-made edge cases."""

from __future__ import annotations

from pathlib import Path

import pytest

from bus.costs.usage_limits import limit_line, limit_text
from worker.programs.gemini.program import GeminiCli
from worker.tmux.dialogs import Dialog, DialogError
from worker.tmux.gemini_screen import LIMITED, STATES, GeminiScreen, read_screen, sent_count


def answer_keys(dialog: Dialog, choice: str) -> list[str]:
    """The keys the worker presses to answer `choice`: the program's pick, then its keys for it."""
    gemini = GeminiCli()
    return gemini.option_keys(dialog, gemini.pick(dialog, choice))


FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "gemini-0.61.0"
SCREENS = sorted(FIXTURES.glob("*-w*.txt"))
DIALOGS = [p for p in SCREENS if p.name.startswith("dialog-")]


def _text(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def test_every_width_and_state_is_captured() -> None:
    names = {p.name for p in SCREENS}
    for width in (80, 100, 200):
        for what in (
            "idle-startup",
            "dialog-shell",
            "dialog-write-file",
            "dialog-replace",
            "working-held-stream",
            "idle-turn-end",
            "exited-quit",
            "limited-usage-limit-reset",
            "limited-usage-limit-daily",
            "idle-quota-error",
        ):
            assert f"{what}-w{width}.txt" in names


@pytest.mark.parametrize("path", SCREENS, ids=[p.name for p in SCREENS])
def test_state_of_each_capture(path: Path) -> None:
    expected = path.name.split("-", 1)[0]
    assert expected in STATES
    assert read_screen(_text(path)).state == expected


@pytest.mark.parametrize("path", DIALOGS, ids=[p.name for p in DIALOGS])
def test_dialog_options_and_keys(path: Path) -> None:
    dialog = read_screen(_text(path)).dialog
    assert dialog is not None
    shell = "shell" in path.name
    assert dialog.title == ("Allow execution of [Shell]?" if shell else "Apply this change?")
    labels = [o.label for o in dialog.options]
    middle = [] if shell else ["Modify with external editor"]
    assert labels == ["Allow once", "Allow for this session", *middle, "No, suggest changes"]
    assert dialog.selected == 0
    assert answer_keys(dialog, "approve") == ["1"]
    assert answer_keys(dialog, "always") == ["2"]
    assert answer_keys(dialog, "deny") == [str(len(labels))]
    assert answer_keys(dialog, "allow for this session") == ["2"]
    with pytest.raises(DialogError, match="no option for 'maybe'"):
        answer_keys(dialog, "maybe")


def test_api_error_at_turn_end_is_read() -> None:
    for width in (80, 100, 200):
        seen = read_screen(_text(FIXTURES / f"idle-api-error-w{width}.txt"))
        assert "scripted request was refused" in seen.error
    assert read_screen(_text(FIXTURES / "idle-turn-end-w100.txt")).error == ""
    for width in (80, 100, 200):
        seen = read_screen(_text(FIXTURES / f"idle-quota-error-w{width}.txt"))
        assert seen.error.startswith("[API Error: You have exhausted your daily quota on this model.]")


@pytest.mark.parametrize("width", [80, 100, 200])
def test_the_usage_limit_dialog_is_no_person_s_dialog(width: int) -> None:
    """ "Usage limit reached for gemini-2.5-flash." with 1. Keep trying / 2. Stop: the agent is parked on
    it, not asked about it (no `permission`), and its reset read when it names one."""
    for what in ("reset", "daily"):
        screen = _text(FIXTURES / f"limited-usage-limit-{what}-w{width}.txt")
        assert read_screen(screen) == GeminiScreen(LIMITED)
        assert GeminiCli().read_dialog(screen) is None
        assert limit_line(screen) == "Usage limit reached for gemini-2.5-flash."
        assert ("Access resets at" in limit_text(screen)) is (what == "reset")


EDGES = {
    "blank-pane": ("\n\n\n", "creating"),
    "pane-dead": ("some output\nPane is dead (status 0, Fri Nov 27 01:48:55 2026)\n", "exited"),
    "hook-running": (
        " ⠋ Executing Hook: ittybus (esc to cancel, 0s)\n ─────\n >   Type your message\n",
        "working",
    ),
    "title-quoted-in-prompt-without-options": (
        " > Apply this change?\n\n >   Type your message or @path\n",
        "idle",
    ),
    "nothing-known": ("hello\nworld\n", "unknown"),
    "limit-title-without-options": (
        " > Usage limit reached for gemini-2.5-flash.\n\n >   Type your message or @path\n",
        "idle",
    ),
}


@pytest.mark.parametrize(("text", "expected"), EDGES.values(), ids=EDGES.keys())
def test_edge_screens(text: str, expected: str) -> None:
    assert read_screen(text).state == expected


def test_an_idle_box_under_a_long_answer_is_not_the_start_up() -> None:
    """The header scrolled away under a long answer: the lines above the box are the answer's own."""
    answer = "\n".join(f"  line {n} of a long answer" for n in range(30))
    box = f"{'─' * 80}\n Shift+Tab to accept edits\n\n >   Type your message or @path/to/file\n"
    assert read_screen(f"{answer}\n\n{box}").state == "idle"


def test_a_warning_over_history_is_not_the_start_up() -> None:
    screen = (
        "⚠  Warning: True color (24-bit) support not detected.\n   color enabled will result in a better\n\n"
        "✦ Done.\n\n"
        f"{'─' * 80}\n Shift+Tab to accept edits\n\n >   Type your message or @path/to/file\n"
    )
    assert read_screen(screen).state == "idle"


def test_a_message_counts_as_sent_once_the_conversation_shows_it() -> None:
    """`ib send` checks a message it emptied the box of shows sent (Gemini CLI forgets one sent as it starts
    resuming a session): in the input box it is not sent, above it, it is, whatever its box held."""
    message = "what was the codeword? say it"
    typed, sent = (
        _text(FIXTURES / "idle-resumed-typed-w200.txt"),
        _text(FIXTURES / "working-resumed-sent-w200.txt"),
    )
    assert (sent_count(typed, message), sent_count(sent, message)) == (0, 1)
    assert sent_count(sent, "what was the codeword?\nsay it") == 1  # its first line is what shows
    assert sent_count(sent, "something else") == 0
    assert sent_count(typed + sent, message) == 1  # an earlier frame's box in the scrollback is no prompt


def test_a_box_the_scrollback_read_cuts_below_its_rule_is_no_sent_prompt() -> None:
    """`ib send` reads 200 lines of the pane; they may begin just under an earlier frame's rule, whose box
    line (` > the message`, drawn as a sent prompt is) is then told by the footer under it. A prompt at the
    first row with the conversation under it still counts (a screen whose conversation starts there)."""
    message = "what was the codeword? say it"
    typed = _text(FIXTURES / "idle-resumed-typed-w200.txt").splitlines()
    sent = _text(FIXTURES / "working-resumed-sent-w200.txt")
    last_rule = max(row for row, line in enumerate(typed) if line.startswith("─" * 8))
    for cut in range(last_rule + 1, last_rule + 4):  # the capture begins 1, 2 or 3 lines under the rule
        assert sent_count("\n".join(typed[cut:]) + "\n" + sent, message) == 1
    wrapped = f" > {message}\n   and a second line\n\n workspace (/directory)   branch   /model\n"
    assert sent_count(wrapped + sent, message) == 1  # a wrapped message in the box
    assert sent_count(f" > {message}\n\n✦ The codeword is PERIWINKLE.\n", message) == 1
