"""Claude Code retrying an API call, read from real 2.1.332 captures: the detail a running agent shows."""

from __future__ import annotations

from pathlib import Path

import pytest

from worker.tmux.retry import retry_detail, retry_notice

PANES = Path(__file__).resolve().parents[1] / "fixtures" / "pane-states"


@pytest.mark.parametrize(
    ("name", "kind", "attempt"),
    [
        ("running-cc2.1.332-retrying-429-w80.txt", "rate_limit", 4),
        ("running-cc2.1.332-retrying-429-w200.txt", "rate_limit", 4),
        ("running-cc2.1.332-retrying-529-w100.txt", "other", 2),
    ],
)
def test_retrying_captures(name: str, kind: str, attempt: int) -> None:
    notice = retry_notice((PANES / name).read_text(encoding="utf-8"))
    assert notice is not None
    assert (notice["kind"], notice["attempt"], notice["attempts"]) == (kind, attempt, 10)


@pytest.mark.parametrize(
    "name",
    ["error-cc2.1.332-api-529-overloaded-w100.txt", "rate_limited-cc2.1.332-api-429-turn-ended-w80.txt"],
)
def test_a_turn_that_ended_is_not_retrying(name: str) -> None:
    assert retry_notice((PANES / name).read_text(encoding="utf-8")) is None


def test_overloaded_by_its_status() -> None:
    notice = retry_notice("✻ 529 Overloaded · retrying in 10s · attempt 5/10\n")
    assert notice is not None and (notice["kind"], notice["retry_in"]) == ("overloaded", 10)


@pytest.mark.parametrize(
    ("text", "detail"),
    [
        ("✻ API error · retrying in 1s · attempt 2/10\n", "retrying · attempt 2/10"),
        ("✻ 429 Too many · retrying in 5s · attempt 4/10\n", "retrying (rate_limit) · attempt 4/10"),
        ("● Hello.\n", ""),
    ],
    ids=["api-error", "rate-limit", "no-retry"],
)
def test_retry_detail(text: str, detail: str) -> None:
    assert retry_detail(text) == detail


def test_the_diff_panel_beside_a_retry_is_not_read() -> None:
    """A panel on the right whose diff mentions a 429 must not change what the retry line says."""
    text = (PANES / "running-cc2.1.332-retrying-529-w100.txt").read_text(encoding="utf-8")
    beside = [f"{line:<100}│ + handle HTTP 429 rate limit" for line in text.splitlines()]
    notice = retry_notice("\n".join(beside))
    assert notice is not None
    assert (notice["kind"], notice["attempt"]) == ("other", 2)
