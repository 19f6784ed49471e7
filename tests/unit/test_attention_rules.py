"""The pure rules of attention: which events open and close an item, and the escalation schedule."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from bus.inbox.attention_rules import (
    CHANNELS,
    DM,
    NEEDS_YOU,
    Round,
    Schedule,
    closes,
    due,
    next_round_in,
    one_per_agent,
    opens,
    stream_order,
)


@pytest.mark.parametrize(
    ("event_type", "agent", "expected"),
    [
        *[(kind, "agent-1", True) for kind in NEEDS_YOU],
        ("limited", "agent-1", True),
        ("runaway", "agent-1", True),
        ("permission", None, False),
        ("permission", "", False),
        ("complete", "agent-1", False),
        ("state", "agent-1", False),
        ("task_added", None, False),
    ],
    ids=str,
)
def test_opens(event_type: str, agent: str | None, expected: bool) -> None:
    assert opens(event_type, agent) is expected


@pytest.mark.parametrize(
    ("event_type", "data", "expected"),
    [
        ("state", {"to_state": "running"}, True),
        ("state", {"to_state": "compacting"}, True),
        ("state", {"to_state": "stopped"}, True),
        ("state", {"to_state": "permission"}, False),  # the pane watcher seeing the same dialog
        ("state", {"to_state": "waiting"}, False),
        ("state", {}, False),
        ("complete", {}, True),
        ("killed", {}, True),
        ("stopped", {}, True),
        ("merged", {}, True),
        ("waiting", {}, False),
        ("permission", {}, False),
    ],
    ids=str,
)
def test_closes(event_type: str, data: dict[str, object], expected: bool) -> None:
    assert closes(event_type, "agent-1", data) is expected
    assert closes(event_type, None, data) is False


SCHEDULE = Schedule(dm_after=60, channels_after=300, repeat=0)
REPEATING = Schedule(dm_after=60, channels_after=300, repeat=600)


@pytest.mark.parametrize(
    ("schedule", "age", "rounds", "next_in"),
    [
        (SCHEDULE, 0, [], 60),
        (SCHEDULE, 59.9, [], pytest.approx(0.1)),
        (SCHEDULE, 60, [Round(DM, 0)], 240),
        (SCHEDULE, 299, [Round(DM, 0)], 1),
        (SCHEDULE, 300, [Round(DM, 0), Round(CHANNELS, 0)], None),
        (SCHEDULE, 86400, [Round(DM, 0), Round(CHANNELS, 0)], None),
        (REPEATING, 660, [Round(DM, 1), Round(CHANNELS, 0)], 240),
        # a bot down for hours: the latest round of each level, never the missed ones
        (REPEATING, 6000, [Round(DM, 9), Round(CHANNELS, 9)], 60),
        (Schedule(dm_after=None, channels_after=5), 10, [Round(CHANNELS, 0)], None),
        (Schedule(dm_after=0, channels_after=None), 0, [Round(DM, 0)], None),
        (Schedule(dm_after=None, channels_after=None, repeat=10), 1000, [], None),
    ],
    ids=[
        "fresh",
        "just-before-dm",
        "dm",
        "before-channels",
        "channels",
        "a-day-later",
        "dm-repeated",
        "after-a-long-outage",
        "channels-only",
        "dm-at-once",
        "nothing-configured",
    ],
)
def test_schedule(schedule: Schedule, age: float, rounds: list[Round], next_in: float | None) -> None:
    assert due(schedule, age) == rounds
    assert next_round_in(schedule, age) == next_in


def test_round_targets_are_distinct_per_round_and_level() -> None:
    marks = {Round(level, n).target("4242") for level in (DM, CHANNELS) for n in range(3)}
    assert len(marks) == 6


@pytest.mark.parametrize(
    ("entry_id", "order"),
    [("1700000000000-0", (1700000000000, 0)), ("5-12", (5, 12)), ("5", (5, 0)), ("junk", (0, 0))],
    ids=["stream-id", "seq", "ms-only", "junk"],
)
def test_stream_order(entry_id: str, order: tuple[int, int]) -> None:
    assert stream_order(entry_id) == order


@dataclass(frozen=True)
class _Item:
    agent: str
    kind: str
    raised_at: float


def test_one_reminder_per_agent_the_one_that_says_most() -> None:
    """A turn that ended on a question raised `question` and `waiting`: two DMs a round for one thing."""
    items = [
        _Item("a", "waiting", 1.0),
        _Item("a", "question", 2.0),
        _Item("b", "waiting", 3.0),
        _Item("c", "error", 4.0),
        _Item("c", "permission", 5.0),
        _Item("c", "permission", 0.5),
        _Item("d", "someday-a-new-kind", 6.0),
        _Item("d", "waiting", 7.0),
    ]
    assert one_per_agent(items) == [items[1], items[2], items[5], items[7]]
    assert one_per_agent([]) == []
