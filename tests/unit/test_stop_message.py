"""stop_decision() on every message in tests/fixtures/stop-messages (the expected decision is the file
name's text before the first hyphen) and on small inline cases."""

from __future__ import annotations

from pathlib import Path

import pytest

from worker.programs.stop_message import DECISIONS, stop_decision, turn_end
from worker.tmux.pane_state import COMPLETION_MARKER

MESSAGES = sorted((Path(__file__).resolve().parent.parent / "fixtures" / "stop-messages").glob("*.txt"))


def _expected(path: Path) -> str:
    expected = path.name.partition("-")[0]
    assert expected in DECISIONS, path.name
    return expected


@pytest.mark.parametrize("path", MESSAGES, ids=[path.name for path in MESSAGES])
def test_message_gives_the_decision_in_its_name(path: Path) -> None:
    assert stop_decision(path.read_text(encoding="utf-8")) == _expected(path)


def test_messages_cover_every_decision() -> None:
    assert {_expected(path) for path in MESSAGES} == set(DECISIONS)


INLINE_CASES = [
    ("no-message", None, "unknown"),
    ("empty", "", "unknown"),
    ("only-whitespace", " \n\t\n", "unknown"),
    ("marker-alone", COMPLETION_MARKER, "complete"),
    ("marker-after-summary", f"Done.\n\n{COMPLETION_MARKER}", "complete"),
    ("marker-indented-then-blank-lines", f"Done.\n   {COMPLETION_MARKER}  \n\n \n", "complete"),
    ("marker-crlf", f"Done.\r\n\r\n{COMPLETION_MARKER}\r\n", "complete"),
    ("marker-then-more-text", f"{COMPLETION_MARKER}\nAnything else?", "unknown"),
    ("marker-in-sentence", f"I will say {COMPLETION_MARKER} when done.", "unknown"),
    ("marker-quoted", f"'{COMPLETION_MARKER}'", "unknown"),
    ("marker-with-period", f"{COMPLETION_MARKER}.", "unknown"),
    ("marker-lowercase", COMPLETION_MARKER.lower(), "unknown"),
    ("waiting-alone", "WAITING", "waiting"),
    ("waiting-after-question", "Which branch?\n\nWAITING\n", "waiting"),
    ("waiting-then-more-text", "WAITING\nfor you", "unknown"),
    ("waiting-in-sentence", "I am WAITING for the reviewer.", "unknown"),
    ("waiting-title-case", "Waiting", "unknown"),
    ("complete-then-waiting", f"{COMPLETION_MARKER}\n\nWAITING", "waiting"),
    ("waiting-then-complete", f"WAITING\n\n{COMPLETION_MARKER}", "complete"),
]


@pytest.mark.parametrize(
    ("message", "expected"),
    [(message, expected) for _, message, expected in INLINE_CASES],
    ids=[case_id for case_id, _, _ in INLINE_CASES],
)
def test_inline_case(message: str | None, expected: str) -> None:
    assert stop_decision(message) == expected


TURN_ENDS = {
    "question-without-marker": ("Should I use Postgres or SQLite?", "waiting"),
    "summary-without-marker": ("Added the flag and its test.", "waiting"),
    "empty-reply": ("", "waiting"),
    "only-whitespace": (" \n\t", "waiting"),
    "marker-in-sentence": (f"I will say {COMPLETION_MARKER} when done.", "waiting"),
    "completion-marker": (f"Done.\n\n{COMPLETION_MARKER}", "complete"),
    "waiting-marker": ("Which branch?\n\nWAITING", "waiting"),
}


@pytest.mark.parametrize(("message", "expected"), TURN_ENDS.values(), ids=TURN_ENDS.keys())
def test_every_turn_end_is_complete_or_waiting(message: str, expected: str) -> None:
    assert turn_end(message) == expected
