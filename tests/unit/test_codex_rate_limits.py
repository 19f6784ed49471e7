"""The reset of Codex CLI's usage limit as its rollout records the API's headers: the window used up in the
last turn, read from a real 0.169.0 rollout and from variations on its `token_count` entry."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bus.costs.usage_limits import RecordedLimit
from worker.programs.codex.program import CodexCli
from worker.programs.codex.rollout import recorded_limit
from worker.programs.jsonl import entries

ROLLOUT = Path(__file__).resolve().parents[1] / "fixtures" / "codex-0.169.0" / "rollout-usage-limit.jsonl"
RESET = 1795956809  # the `x-codex-primary-reset-at` the stand-in sent in that capture


def _lines() -> list[dict[str, object]]:
    return entries(ROLLOUT.read_bytes())[0]


def _token_count(**windows: object) -> dict[str, object]:
    limits = {"limit_id": "codex", "primary": None, "secondary": None, **windows}
    return {"type": "event_msg", "payload": {"type": "token_count", "info": None, "rate_limits": limits}}


def _window(used: object, minutes: object, at: object) -> dict[str, object]:
    return {"used_percent": used, "window_minutes": minutes, "resets_at": at}


STARTED = {"type": "event_msg", "payload": {"type": "task_started"}}
WEEK = 7 * 86400

CASES = {
    "the-capture": (_lines(), RecordedLimit(RESET, "five_hour")),
    "before-the-limit": (_lines()[:5], None),
    "reset-not-given": ([STARTED, _token_count(primary=_window(100.0, 300, None))], None),
    "not-used-up": ([STARTED, _token_count(primary=_window(99.5, 300, RESET))], None),
    "weekly": (
        [STARTED, _token_count(primary=_window(40, 300, RESET), secondary=_window(100, 10080, RESET + WEEK))],
        RecordedLimit(RESET + WEEK, "seven_day"),
    ),
    "both-the-later": (
        [_token_count(primary=_window(100, 300, RESET), secondary=_window(100, 10080, RESET + WEEK))],
        RecordedLimit(RESET + WEEK, "seven_day"),
    ),
    "an-earlier-turn": ([*_lines(), STARTED], None),
    "garbled": (
        [
            _token_count(primary=_window("100", 300, RESET)),
            _token_count(primary=_window(100, 300, "soon")),
            _token_count(primary="full"),
            {"type": "event_msg", "payload": {"type": "token_count", "rate_limits": []}},
            {"type": "event_msg", "payload": "token_count"},
            {"type": "response_item", "payload": {"type": "token_count"}},
        ],
        None,
    ),
}


@pytest.mark.parametrize(("lines", "expected"), CASES.values(), ids=CASES.keys())
def test_recorded_limit(lines: list[dict[str, object]], expected: RecordedLimit | None) -> None:
    assert recorded_limit(lines) == expected


def test_the_program_reads_the_rollout_s_end(tmp_path: Path) -> None:
    """Only the end of a long rollout is read; a missing or unnamed one records nothing."""
    long = tmp_path / "rollout.jsonl"
    filler = json.dumps({"type": "response_item", "payload": {"text": "x" * 1000}}) + "\n"
    long.write_bytes(filler.encode() * 200 + ROLLOUT.read_bytes())
    assert CodexCli().recorded_limit(str(long)) == RecordedLimit(RESET, "five_hour")
    assert CodexCli().recorded_limit(str(tmp_path / "missing.jsonl")) is None
    assert CodexCli().recorded_limit("") is None
