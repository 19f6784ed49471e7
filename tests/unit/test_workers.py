"""Worker ids (they go into key and stream names), ages of last sightings, how often the bot sweeps."""

from __future__ import annotations

import pytest

from bot.feeds.worker_watch import sweep_interval
from bus.commands.workers import describe_age
from bus.wire.names import worker_id_problem

GOOD = ["wa", "build-box.example.com", "W_2", "a" * 64, "9lives"]
BAD = ["", "w:b", "w b", "w*", "-lead", ".dot", "a" * 65, "wä", "w/b", "w{b}"]


@pytest.mark.parametrize("worker", GOOD)
def test_good_worker_ids(worker: str) -> None:
    assert worker_id_problem(worker) is None


@pytest.mark.parametrize("worker", BAD)
def test_bad_worker_ids_are_named(worker: str) -> None:
    problem = worker_id_problem(worker)
    assert problem is not None and repr(worker) in problem and "letters, digits" in problem


AGES = [
    ("zero", 0, "0 s"),
    ("seconds", 42_900, "42 s"),
    ("two-minutes", 120_000, "2 min"),
    ("hours", 3 * 3600_000, "3 h"),
    ("days", 3 * 86400_000, "3 days"),
    ("clock-behind", -5_000, "0 s"),
]


@pytest.mark.parametrize(("ms", "said"), [a[1:] for a in AGES], ids=[a[0] for a in AGES])
def test_describe_age(ms: int, said: str) -> None:
    assert describe_age(ms) == said


@pytest.mark.parametrize(("ttl", "every"), [(2, 0.5), (5, 1.0), (15, 2.0), (3600, 2.0)])
def test_the_bot_sweeps_well_within_the_heartbeat_ttl(ttl: int, every: float) -> None:
    assert sweep_interval(ttl) == every
