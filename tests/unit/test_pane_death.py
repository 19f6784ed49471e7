"""What a dead pane tells (pure): its exit status or signal, and the last lines its program printed."""

from __future__ import annotations

import pytest

from worker.tmux.pane_death import Death, last_lines, parse_dead

REFUSAL = "--dangerously-skip-permissions cannot be used with root/sudo privileges for security reasons"


@pytest.mark.parametrize(
    ("fields", "expected"),
    [("1\x1f\n", (1, None)), ("\x1f9", (None, 9)), ("\x1f", (None, None)), ("", (None, None))],
    ids=["status", "signal", "neither-yet", "empty"],
)
def test_parse_dead(fields: str, expected: tuple[int | None, int | None]) -> None:
    assert parse_dead(fields) == expected


def test_last_lines_leave_out_blanks_and_tmuxs_own_line() -> None:
    text = (
        "starting\n\n"
        + "".join(f"line {i}\n" for i in range(8))
        + REFUSAL
        + "\n\nPane is dead (status 1, Thu)\n"
    )
    assert last_lines(text) == ("line 4", "line 5", "line 6", "line 7", REFUSAL)
    assert last_lines("Pane is dead (status 0, Thu)\n") == ()
    assert last_lines("x" * 1000) == ("x" * 300,)


@pytest.mark.parametrize(
    ("death", "message", "summary"),
    [
        (
            Death(1, None, ("boot", REFUSAL)),
            f"a1 stopped (exit status 1): {REFUSAL}",
            f"exit status 1: {REFUSAL}",
        ),
        (Death(None, 9, ()), "a1 stopped (killed by signal 9)", "killed by signal 9"),
        (Death(None, None, ("bye",)), "a1 stopped (exited): bye", "exited: bye"),
    ],
    ids=["status-and-output", "signal-silent", "status-unknown"],
)
def test_message_and_summary(death: Death, message: str, summary: str) -> None:
    assert (death.message("a1"), death.summary) == (message, summary)
    assert death.data()["last_lines"] == list(death.last_lines)
