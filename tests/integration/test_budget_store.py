"""Budgets on the real bus: which day budget stands (the date's own, the standing one, the setting), a day's
raise for that date only, the warning and pause marks sent once, the first reason of a pause kept, and a
raise that leaves the budget used up keeping the pause."""

from __future__ import annotations

import pytest
import redis

from bus.costs.budgets import TOKENS, USD, Amount
from bus.errors import Conflict, InvalidInput
from bus.stores import budget_store
from bus.wire.keys import Keys

DAY, NEXT = "2026-11-27", "2026-11-28"


def spend(rds: redis.Redis, keys: Keys, agent: str, usd: float, tokens: int = 0, day: str = DAY) -> None:
    pipe = rds.pipeline()
    budget_store.charge(pipe, keys, agent, "paint", day, usd, tokens)
    pipe.execute()


def test_the_day_budget_that_stands(rds: redis.Redis, keys: Keys) -> None:
    setting = Amount(USD, 30.0)
    assert budget_store.budget(rds, keys, "day", DAY) is None  # nothing set, no setting
    day = budget_store.budget(rds, keys, "day", DAY, setting)
    assert day is not None and day.limit == setting
    budget_store.set_budget(rds, keys, "day", "", Amount(USD, 20.0))
    day = budget_store.budget(rds, keys, "day", DAY, setting)
    assert day is not None and day.limit == Amount(USD, 20.0)  # the standing one outranks the setting

    spend(rds, keys, "a-1", 25.0)
    raised = budget_store.raise_budget(rds, keys, "day", DAY, Amount(USD, 10.0), setting)
    assert raised.limit == Amount(USD, 30.0) and raised.spent.usd == pytest.approx(25.0)
    tomorrow = budget_store.budget(rds, keys, "day", NEXT, setting)
    assert tomorrow is not None and tomorrow.limit == Amount(USD, 20.0)  # the raise was for that date
    assert tomorrow.spent.usd == 0


def test_marks_are_sent_once_and_a_raise_lets_them_be_sent_again(rds: redis.Redis, keys: Keys) -> None:
    budget_store.set_budget(rds, keys, "agent", "a-1", Amount(TOKENS, 100_000))
    spend(rds, keys, "a-1", 0.5, 120_000)
    (item,) = budget_store.covering(rds, keys, "a-1", "", DAY, None)
    assert item.over
    assert budget_store.mark(rds, keys, item, "exceeded") is True
    assert budget_store.mark(rds, keys, item, "exceeded") is False  # a second worker sends nothing
    raised = budget_store.raise_budget(rds, keys, "agent", "a-1", Amount(TOKENS, 100_000))
    assert not raised.exceeded and raised.warned is False  # 60 %: both may be sent again
    with pytest.raises(InvalidInput, match="counted in tokens, not usd"):
        budget_store.raise_budget(rds, keys, "agent", "a-1", Amount(USD, 1.0))


def test_a_pause_keeps_its_first_reason(rds: redis.Redis, keys: Keys) -> None:
    assert budget_store.hold(rds, keys, "a-1", budget_store.WATCHDOG, "looping", rule="repeat")
    assert not budget_store.hold(rds, keys, "a-1", budget_store.BUDGET, "spent", scope="agent", target="a-1")
    assert budget_store.hold_of(rds, keys, "a-1") == {
        "reason": "looping",
        "kind": "runaway",
        "rule": "repeat",
        "at": budget_store.hold_of(rds, keys, "a-1")["at"],
    }
    with pytest.raises(Conflict, match="not paused by a budget \\(the watchdog paused it"):
        budget_store.raise_hold(rds, keys, "a-1", None)


def test_a_raise_too_small_keeps_the_pause(rds: redis.Redis, keys: Keys) -> None:
    budget_store.set_budget(rds, keys, "agent", "a-1", Amount(USD, 1.0))
    spend(rds, keys, "a-1", 3.0)
    budget_store.hold(rds, keys, "a-1", budget_store.BUDGET, "spent", scope="agent", target="a-1")
    raised, going = budget_store.raise_hold(rds, keys, "a-1", None)  # by its limit: $2, still used up
    assert (raised.limit, going) == (Amount(USD, 2.0), False)
    assert rds.exists(keys.hold("a-1"))
    raised, going = budget_store.raise_hold(rds, keys, "a-1", Amount(USD, 5.0))
    assert (raised.limit, going) == (Amount(USD, 7.0), True)
    assert not rds.exists(keys.hold("a-1"))
    budget_store.hold(rds, keys, "a-1", budget_store.BUDGET, "spent", scope="agent", target="a-1")
    with pytest.raises(Conflict, match="paused by a budget, not the watchdog"):
        budget_store.go_on(rds, keys, "a-1", "w-1")  # Continue never lifts a budget's pause
    assert rds.exists(keys.hold("a-1"))


@pytest.mark.parametrize("standing", [None, Amount(USD, 20.0)], ids=["no-day-budget", "a-standing-day"])
def test_every_agent_at_once_reads_as_each_alone(
    rds: redis.Redis, keys: Keys, standing: Amount | None
) -> None:
    """What the worker's tick reads for all its agents in one go is what `covering` and `hold_of` read for
    each: agent, task and day budgets, set or not, over or not, held or not."""
    if standing is not None:
        budget_store.set_budget(rds, keys, "day", "", standing)
    budget_store.set_budget(rds, keys, "agent", "a-1", Amount(USD, 5.0))
    budget_store.set_budget(rds, keys, "task", "paint", Amount(TOKENS, 1000))
    spend(rds, keys, "a-1", 6.0, 400)
    spend(rds, keys, "a-2", 1.0, 700)
    budget_store.hold(rds, keys, "a-1", budget_store.BUDGET, "its budget is used up")
    agents = [("a-1", "paint"), ("a-2", "paint"), ("a-3", ""), ("a-4", "sand")]
    setting = Amount(USD, 30.0)
    each = [
        (budget_store.covering(rds, keys, agent, task, DAY, setting), budget_store.hold_of(rds, keys, agent))
        for agent, task in agents
    ]
    assert budget_store.covering_each(rds, keys, agents, DAY, setting) == each
    assert [len(budgets) for budgets, _held in each] == [3, 2, 1, 1]  # a-1's, paint's, and the day's
    assert budget_store.covering_each(rds, keys, [], DAY, None) == []
