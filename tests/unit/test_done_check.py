"""How a failed test command is told: its outcome and the last lines it printed."""

from __future__ import annotations

import pytest

from worker.tasks.done_check import RunResult, failure_note, outcome, tail


@pytest.mark.parametrize(
    ("output", "lines", "expected"),
    [
        ("", 3, ""),
        ("a\nb\n", 3, "a\nb"),
        ("1\n2\n3\n4\n5\n", 2, "4\n5"),
        ("only one line", 3, "only one line"),
    ],
    ids=["empty", "short", "cut-to-last", "no-newline"],
)
def test_tail_keeps_the_last_lines(output: str, lines: int, expected: str) -> None:
    assert tail(output, lines) == expected


def test_tail_is_bounded_in_bytes_on_a_character_boundary() -> None:
    assert tail("é" * 100, 40, limit=11) == "é" * 5


RUNS = {
    "exit-code": (
        RunResult("pytest -q", "/wt", 2, "FAILED test_a\n1 failed\n", 60),
        "exited 2 in /wt; last lines:",
    ),
    "timeout": (
        RunResult("sleep 9", "/wt", None, "", 0.5),
        "was stopped after 0.5 s (time limit) in /wt (no output)",
    ),
}


@pytest.mark.parametrize(("run", "says"), RUNS.values(), ids=RUNS.keys())
def test_failure_note_says_how_it_ended_and_where(run: RunResult, says: str) -> None:
    note = failure_note(run)
    assert says in note and note.startswith(f"test command `{run.command}`")
    assert not run.passed
    assert outcome(run) in note


def test_a_zero_exit_passes() -> None:
    assert RunResult("true", "/wt", 0, "", 1).passed
