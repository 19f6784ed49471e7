"""What `ib cost` prints: `--since` spans read or refused in one line, the table per agent and model, the
total, and the models without a price named."""

from __future__ import annotations

import json

import pytest

from bus.costs.cost_report import report, report_json, report_lines, since_seconds
from bus.costs.usage import Usage


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("90s", 90),
        ("30m", 1800),
        ("2h", 7200),
        ("1d", 86400),
        ("1w", 604800),
        ("1h30m", 5400),
        (" 2H ", 7200),
    ],
    ids=["seconds", "minutes", "hours", "days", "weeks", "mixed", "spaced-upper"],
)
def test_since(text: str, seconds: float) -> None:
    assert since_seconds(text) == seconds


@pytest.mark.parametrize(
    "text",
    ["", "soon", "30", "m", "0m", "-1h", "1.5h", "1y", "99999w", "٣h", "1h 30m", "2h;rm"],
    ids=[
        "empty",
        "word",
        "no-unit",
        "no-number",
        "zero",
        "negative",
        "fraction",
        "unknown-unit",
        "too-long",
        "arabic-digit",
        "space-inside",
        "junk",
    ],
)
def test_bad_since_is_one_line(text: str) -> None:
    with pytest.raises(ValueError, match="is not a duration: write a number and a unit") as e:
        since_seconds(text)
    assert "\n" not in str(e.value)


RECORDS = {
    "painter": [
        Usage("claude-sonnet-4-5", 0, 1_000_000, 100_000, 0, 0),
        Usage("claude-opus-5-5", 0, 0, 0, 200_000, 3_000_000),
    ],
    "scribe": [Usage("claude-mystery-1", 0, 10, 20, 0, 0)],
}


def test_the_table() -> None:
    lines = report_lines(report(RECORDS, {}), "cost of all agents")
    assert lines[0] == "cost of all agents"
    assert lines[1].split() == [
        "AGENT",
        "MODEL",
        "ANSWERS",
        "INPUT",
        "OUTPUT",
        "CACHE",
        "W",
        "CACHE",
        "R",
        "COST",
    ]
    assert lines[2].split() == ["painter", "claude-opus-5-5", "1", "0", "0", "200000", "3000000", "$1.60"]
    assert lines[3].split() == ["painter", "claude-sonnet-4-5", "1", "1000000", "100000", "0", "0", "$4.50"]
    assert lines[4].split() == ["scribe", "claude-mystery-1", "1", "10", "20", "0", "0", "unpriced"]
    assert lines[5] == "total: $6.10 + unpriced (claude-mystery-1) · 4.3M tokens in 3 answers"
    assert lines[6] == "no price for claude-mystery-1: set IB_PRICES (see docs/guide/cost.md)"


def test_a_price_setting_prices_the_unknown_model() -> None:
    lines = report_lines(report(RECORDS, {"claude-mystery-1": (1e6, 1e6, 0, 0)}), "t")
    assert lines[-1] == "total: $36.10 · 4.3M tokens in 3 answers"


def test_nothing_recorded() -> None:
    assert report_lines(report({}, {}), "cost of agent a") == ["cost of agent a: no model answers recorded"]


def test_json_has_the_total_and_each_agent() -> None:
    data = report_json(report(RECORDS, {}), {"since": "1d"})
    assert json.loads(json.dumps(data)) == data
    assert data["scope"] == {"since": "1d"}
    total = data["total"]
    assert isinstance(total, dict) and total["usd"] == pytest.approx(6.1) and total["answers"] == 3
    assert total["unpriced"] == ["claude-mystery-1"]
    agents = data["agents"]
    assert isinstance(agents, dict) and set(agents) == {"painter", "scribe"}
