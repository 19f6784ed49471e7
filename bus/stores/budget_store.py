"""Budgets on the bus: each budget's limit (`Keys.budget`), what its scope has spent and which events were
sent (`Keys.spent`, kept by the worker's transcript tail), and the holds that pause an agent (`Keys.hold`,
read by its PreToolUse hook on every tool call).

A day's budget is the one set for that date, else the standing one (`ib budget set --day`), else the
setting IB_DAY_BUDGET. Raising a day raises that date only.
"""

from __future__ import annotations

import time
from typing import Any, cast

import redis

from bus.costs.budgets import TOKENS, Amount, Budget, Spent, raise_step
from bus.errors import Conflict, InvalidInput, NotFound
from bus.wire.keys import Keys

WATCHDOG = "runaway"
BUDGET = "budget"
RESET = "reset"
"""A tool-call stream entry that tells the watchdog to forget an agent's calls (the person said go on)."""


def today(at: float | None = None) -> str:
    """The UTC date a day budget is kept under: `2026-11-27`."""
    return time.strftime("%Y-%m-%d", time.gmtime(time.time() if at is None else at))


def set_budget(client: redis.Redis, keys: Keys, scope: str, target: str, limit: Amount) -> None:
    """Set (or replace) a budget; its events may be sent again against the new limit."""
    pipe = client.pipeline()
    pipe.hset(keys.budget(scope, target), mapping={"unit": limit.unit, "limit": repr(limit.value)})
    pipe.sadd(keys.budgets, f"{scope}:{target}")
    pipe.hdel(keys.spent(scope, target), "warned", "exceeded")
    if scope == "day" and not target:  # the standing budget is today's too: its events may come again
        pipe.hdel(keys.spent("day", today()), "warned", "exceeded")
    pipe.execute()


def remove_budget(client: redis.Redis, keys: Keys, scope: str, target: str) -> bool:
    pipe = client.pipeline()
    pipe.delete(keys.budget(scope, target))
    pipe.srem(keys.budgets, f"{scope}:{target}")
    return bool(pipe.execute()[0])


def _limit(fields: dict[str, str]) -> Amount | None:
    try:
        value = float(fields.get("limit", ""))
    except ValueError:
        return None
    unit = fields.get("unit", "")
    return Amount(unit, value) if unit in ("usd", TOKENS) and value > 0 else None


def _spent(fields: dict[str, str]) -> Spent:
    try:
        usd = float(fields.get("usd") or 0)
    except ValueError:
        usd = 0.0
    tokens = fields.get("tokens") or "0"
    return Spent(usd, int(tokens) if tokens.isdigit() else 0)


def _hash(client: redis.Redis, key: str) -> dict[str, str]:
    return cast("dict[str, str]", client.hgetall(key))


def budget(
    client: redis.Redis, keys: Keys, scope: str, target: str, day_default: Amount | None = None
) -> Budget | None:
    """One budget with what its scope spent; None when none is set. For a day (`target` a date), the
    standing day budget or `day_default` stands in when that date has none of its own."""
    found = _read(client, keys, [(scope, target)], day_default)
    return found[0] if found else None


def _read(
    client: redis.Redis, keys: Keys, targets: list[tuple[str, str]], day_default: Amount | None
) -> list[Budget]:
    """The budgets of `targets` that are set, with what their scopes spent: one round trip."""
    pipe = client.pipeline()
    _ask(pipe, keys, targets)
    pipe.hgetall(keys.budget("day", ""))
    replies = cast("list[dict[str, str]]", pipe.execute())
    return _found(replies[:-1], targets, _limit(replies[-1]) or day_default)


def _ask(pipe: redis.client.Pipeline, keys: Keys, targets: list[tuple[str, str]]) -> None:
    for scope, target in targets:
        pipe.hgetall(keys.budget(scope, target))
        pipe.hgetall(keys.spent(scope, target))


def _found(
    replies: list[dict[str, str]], targets: list[tuple[str, str]], standing: Amount | None
) -> list[Budget]:
    """The budgets `_ask` read for `targets`; a date with none of its own has the `standing` one."""
    found = []
    for n, (scope, target) in enumerate(targets):
        limit, spent = _limit(replies[2 * n]), replies[2 * n + 1]
        if limit is None and scope == "day" and target:
            limit = standing
        if limit is not None:
            warned, exceeded = spent.get("warned") == "1", spent.get("exceeded") == "1"
            found.append(Budget(scope, target, limit, _spent(spent), warned, exceeded))
    return found


def covering(
    client: redis.Redis, keys: Keys, agent: str, task: str, day: str, day_default: Amount | None
) -> list[Budget]:
    """The budgets an agent's spending counts against now: its own, its task's, the day's."""
    targets = [("agent", agent)] + ([("task", task)] if task else []) + [("day", day)]
    return _read(client, keys, targets, day_default)


def covering_each(
    client: redis.Redis, keys: Keys, agents: list[tuple[str, str]], day: str, day_default: Amount | None
) -> list[tuple[list[Budget], dict[str, str]]]:
    """For each (agent, task): what `covering` reads, and the agent's hold (`hold_of`), in two round trips
    for any number of agents; the day's budget is read once, an agent's or a task's only when it is set.
    A worker looks at all its agents every tick: two round trips each cost it most of a core at 1,000."""
    named = {str(name) for name in cast("set[str]", client.smembers(keys.budgets))}
    pipe = client.pipeline()
    pipe.hgetall(keys.budget("day", ""))
    _ask(pipe, keys, [("day", day)])
    own: list[list[tuple[str, str]]] = []
    for agent, task in agents:
        targets = [
            (scope, name) for scope, name in (("agent", agent), ("task", task)) if f"{scope}:{name}" in named
        ]
        _ask(pipe, keys, targets)
        pipe.hgetall(keys.hold(agent))
        own.append(targets)
    replies = cast("list[dict[str, str]]", pipe.execute())
    standing = _limit(replies[0]) or day_default
    days = _found(replies[1:3], [("day", day)], standing)
    found, at = [], 3
    for targets in own:
        end = at + 2 * len(targets)
        found.append((_found(replies[at:end], targets, standing) + days, replies[end]))
        at = end + 1
    return found


def listed(client: redis.Redis, keys: Keys, day_default: Amount | None) -> list[Budget]:
    """Every budget set, and today's, for `ib budget list`."""
    names = sorted(cast("set[str]", client.smembers(keys.budgets)))
    found = []
    for name in names:
        scope, _, target = name.partition(":")
        if scope == "day" and not target:
            continue  # the standing day budget shows as today's
        item = budget(client, keys, scope, target)
        if item is not None:
            found.append(item)
    day = budget(client, keys, "day", today(), day_default)
    if day is not None and all(b.name != day.name for b in found):
        found.append(day)
    return found


def charge(
    pipe: redis.client.Pipeline, keys: Keys, agent: str, task: str, day: str, usd: float, tokens: int
) -> None:
    """Add one read of an agent's answers to what it, its task and the day spent."""
    scopes = [("agent", agent), ("day", day)] + ([("task", task)] if task else [])
    for scope, target in scopes:
        pipe.hincrbyfloat(keys.spent(scope, target), "usd", usd)
        pipe.hincrby(keys.spent(scope, target), "tokens", tokens)


def mark(client: redis.Redis, keys: Keys, item: Budget, step: str) -> bool:
    """Note that `step` (warning, exceeded) was sent for `item`; False when someone already did."""
    field = "warned" if step == "warning" else "exceeded"
    return bool(client.hsetnx(keys.spent(item.scope, item.target), field, "1"))


# --- holds ------------------------------------------------------------------------------------------


def hold(client: redis.Redis, keys: Keys, agent: str, kind: str, reason: str, **fields: str) -> bool:
    """Pause `agent` at its next tool call; False when it is paused already (the first reason stays)."""
    key = keys.hold(agent)
    if not client.hsetnx(key, "reason", reason):
        return False  # the first reason stays
    client.hset(key, mapping=cast("Any", {"kind": kind, "at": f"{time.time():.3f}", **fields}))
    return True


def hold_of(client: redis.Redis, keys: Keys, agent: str) -> dict[str, str]:
    return _hash(client, keys.hold(agent))


def release(client: redis.Redis, keys: Keys, agent: str) -> dict[str, str]:
    """Lift an agent's pause; what the hold said ({} when it had none)."""
    pipe = client.pipeline()
    pipe.hgetall(keys.hold(agent))
    pipe.delete(keys.hold(agent))
    return cast("dict[str, str]", pipe.execute()[0])


def raise_budget(
    client: redis.Redis, keys: Keys, scope: str, target: str, by: Amount, day_default: Amount | None = None
) -> Budget:
    """Add `by` to a budget (a day's raise is that date's own); its events may be sent again below the
    new limit. NotFound when there is no such budget, InvalidInput when `by` is in the other unit."""
    current = budget(client, keys, scope, target, day_default)
    if current is None:
        raise NotFound(f"no {scope} budget for {target!r}: set one with ib budget set")
    if by.unit != current.limit.unit:
        raise InvalidInput(
            f"the {current.name} budget is counted in {current.limit.unit}, not {by.unit}: "
            f"raise it by an amount like {raise_step(current.limit)}"
        )
    new = current.limit.plus(by)
    client.hset(keys.budget(scope, target), mapping={"unit": new.unit, "limit": repr(new.value)})
    client.sadd(keys.budgets, f"{scope}:{target}")
    raised = Budget(scope, target, new, current.spent)
    stale = ["exceeded"] + (["warned"] if raised.share < 0.8 else [])
    client.hdel(keys.spent(scope, target), *stale)
    return budget(client, keys, scope, target, day_default) or raised


def raise_hold(
    client: redis.Redis, keys: Keys, agent: str, by: Amount | None, day_default: Amount | None = None
) -> tuple[Budget, bool]:
    """Raise the budget that paused `agent` by `by` (None: its limit once more) and lift the pause when
    the budget is no longer used up; the budget as raised, and whether the agent goes on."""
    held = hold_of(client, keys, agent)
    if held.get("kind") != BUDGET:
        what = "the watchdog paused it: ib budget continue" if held else "it is not paused"
        raise Conflict(f"{agent} is not paused by a budget ({what})")
    scope, target = held.get("scope", ""), held.get("target", "")
    current = budget(client, keys, scope, target, day_default)
    if current is None:
        release(client, keys, agent)
        raise NotFound(f"the {scope} budget that paused {agent} is gone; {agent} goes on")
    raised = raise_budget(client, keys, scope, target, by or raise_step(current.limit), day_default)
    if raised.over:
        return raised, False
    release(client, keys, agent)
    return raised, True


def go_on(client: redis.Redis, keys: Keys, agent: str, worker: str) -> dict[str, str]:
    """Lift a watchdog pause and have the watchdog forget the agent's calls so far; what the hold said
    ({} when it had none). A budget's pause stays: Conflict says how to raise it."""
    if client.hget(keys.hold(agent), "kind") == BUDGET:
        raise Conflict(f"{agent} is paused by a budget, not the watchdog: ib budget raise {agent}")
    held = release(client, keys, agent)
    if worker:
        client.xadd(keys.tool_calls(worker), cast("Any", {"agent": agent, RESET: "1"}), maxlen=10_000)
    return held
