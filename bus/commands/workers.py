"""Workers on the bus: valid worker ids, who is alive, when each was last seen, and which are down.

A worker renews its heartbeat `worker:<id>` and records the Redis time of each renewal in `worker-seen`,
so "last seen" never depends on the clocks of two machines agreeing. Any process may sweep: a worker of
`workers` whose heartbeat expired is marked down once and its agents (its agent index) become `unreachable`,
in one script; the worker, once back, puts them back (bus/lua/worker_down.lua, worker_back.lua).
"""

from __future__ import annotations

import os
from functools import cache
from typing import cast

import redis

from bus.errors import BusUnavailable, InvalidInput, NotFound
from bus.events.envelope import now_ts
from bus.wire.keys import Keys
from bus.wire.names import worker_id_problem

_MARK = "\x01"
_LUA = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lua")  # bus/lua
_SEEN = """
local t = redis.call('TIME')
redis.call('HSET', KEYS[1], ARGV[1], t[1] * 1000 + math.floor(t[2] / 1000))
return redis.call('SISMEMBER', KEYS[2], ARGV[1])
"""
_AGO = """
local t = redis.call('TIME')
local seen = redis.call('HGET', KEYS[1], ARGV[1])
if not seen then return -1 end
return t[1] * 1000 + math.floor(t[2] / 1000) - tonumber(seen)
"""


class WorkerGone(BusUnavailable):
    """The worker that owns an agent is not running (its heartbeat expired)."""


class UnknownWorker(NotFound):
    """No worker of that id ever ran on this bus."""


def validate_worker_id(value: str) -> str:
    problem = worker_id_problem(value)
    if problem:
        raise InvalidInput(problem)
    return value


def describe_age(ms: int) -> str:
    """`42 s`, `3 min`, `2 h`, `5 days`: how long ago a worker was seen. Pure."""
    seconds = max(0, ms) // 1000
    if seconds < 120:
        return f"{seconds} s"
    if seconds < 7200:
        return f"{seconds // 60} min"
    if seconds < 172800:
        return f"{seconds // 3600} h"
    return f"{seconds // 86400} days"


@cache
def _script(name: str) -> str:
    with open(os.path.join(_LUA, f"{name}.lua"), encoding="utf-8") as f:
        return f.read()


def alive(client: redis.Redis, keys: Keys, worker: str) -> bool:
    return bool(client.exists(keys.worker(worker)))


def record_seen(client: redis.Redis, keys: Keys, worker: str) -> bool:
    """Note that `worker` is alive now (Redis time); True when it had been marked down meanwhile."""
    return bool(client.eval(_SEEN, 2, keys.worker_seen, keys.workers_down, worker))


def seen_ago_ms(client: redis.Redis, keys: Keys, worker: str) -> int | None:
    """Milliseconds since `worker` last renewed its heartbeat, by the Redis clock; None if never."""
    ago = int(cast(int, client.eval(_AGO, 1, keys.worker_seen, worker)))
    return None if ago < 0 else ago


def require_alive(client: redis.Redis, keys: Keys, worker: str) -> None:
    """Raise WorkerGone (with when it was last seen) or UnknownWorker unless `worker` runs now."""
    if alive(client, keys, worker):
        return
    ago = seen_ago_ms(client, keys, worker)
    if ago is None:
        known = sorted(str(w) for w in cast(set[str], client.smembers(keys.workers)))
        raise UnknownWorker(
            f"no worker {worker!r} has run on this bus (running: {', '.join(known) or 'none'})"
        )
    raise WorkerGone(
        f"worker {worker!r} is gone (its heartbeat expired): last seen {describe_age(ago)} ago; "
        "start `ib worker` on that machine, or check that it reaches Redis"
    )


def sweep(client: redis.Redis, keys: Keys, events_maxlen: int) -> list[str]:
    """Mark down every registered worker whose heartbeat expired (its agents: unreachable)."""
    gone = client.eval(
        _script("worker_down"),
        5,
        keys.workers,
        keys.workers_down,
        keys.agents,
        keys.events,
        keys.agent_index,
        keys.worker(_MARK),
        keys.agent(_MARK),
        events_maxlen,
        now_ts(),
        keys.worker_agents(_MARK),
    )
    return [str(w) for w in cast(list[str], gone)]


def come_back(client: redis.Redis, keys: Keys, worker: str, events_maxlen: int) -> list[str]:
    """`worker` runs again: its unreachable agents get their states back; returns their ids."""
    back = client.eval(
        _script("worker_back"),
        5,
        keys.workers_down,
        keys.agents,
        keys.events,
        keys.agent_index,
        keys.worker_agents(worker),
        keys.agent(_MARK),
        events_maxlen,
        now_ts(),
        worker,
    )
    return [str(a) for a in cast(list[str], back)]
