"""`ib task claim --wait`, the Linda `in()`: take the project's next ready task, blocking until there is one.

Nothing sleeps: the waiter blocks in Redis (`XREAD BLOCK`) on the events stream and tries the claim
once at the start and again on every event of its project that may free a task (`task_ready`, or a task
or merge that ended, which lets go of tasks held for overlaps). The claim is one Lua script, so two
waiters never get the same task; the one that loses simply waits on.
"""

from __future__ import annotations

import contextlib
import math
import time
from collections.abc import Callable, Mapping
from typing import Protocol

import redis

from bus.errors import BusUnavailable
from bus.events.envelope import EVENT_FIELD, decode
from bus.events.streams import entries_of
from bus.tasks.task_model import Task
from bus.wire.ids import validate_id
from bus.wire.keys import Keys

BLOCK_SLICE_MS = 60_000  # the longest single XREAD; a longer wait is several, each woken by Redis
READ_COUNT = 1000


# A task became ready, or one in flight ended (done, failed, merged) and may let go of a held task.
WAKING = ("task_ready", "task_done", "task_failed", "merge_merged", "merge_conflict", "merge_failed")


class Claimer(Protocol):
    def claim(self, project: str, agent: str) -> Task | None: ...


def wakes(fields: Mapping[str, str], project: str) -> bool:
    """Whether an events-stream entry may make a task of `project` claimable. Pure."""
    raw = fields.get(EVENT_FIELD, "")
    if not any(f'"{kind}"' in raw for kind in WAKING):  # most entries: no JSON parsing needed
        return False
    event = decode("0-0", raw)
    return event.get("type") in WAKING and event.get("project") == project


def waiter_name(project: str, agent: str) -> str:
    """The Redis client name of a waiting claimer: `CLIENT LIST` shows who waits for which project."""
    return f"ib-claim-wait:{project}:{agent}"


def stream_end(reader: redis.Redis, keys: Keys) -> str:
    """The id of the events stream's last entry ("0-0" when it is empty): where waiting starts."""
    last = reader.xrevrange(keys.events, count=1)
    return str(last[0][0]) if last else "0-0"


def claim_wait(
    store: Claimer,
    reader: redis.Redis,
    keys: Keys,
    project: str,
    agent: str,
    timeout: float | None,
    on_wait: Callable[[], None] | None = None,
) -> Task | None:
    """The project's next ready task, claimed for `agent`; waits up to `timeout` seconds (None: for ever)
    for one to become ready, and returns None when the time runs out.

    `reader` must be a client without a socket timeout (`bus.connection.clients.client_for(url,
    blocking=True)`). The stream position is taken before the first try, so a task made ready between that try
    and the first blocking read still wakes the waiter. `on_wait` is called once, when the waiting begins; the
    reader's connection is named `waiter_name(project, agent)` while it waits.
    """
    validate_id("project", project)
    validate_id("agent", agent)
    deadline = None if timeout is None else time.monotonic() + max(0.0, timeout)
    try:
        position = stream_end(reader, keys)
        task = store.claim(project, agent)
        if task is not None or (timeout is not None and timeout <= 0):
            return task
        with contextlib.suppress(redis.ResponseError):  # a name is for people; an ACL may refuse it
            reader.client_setname(waiter_name(project, agent))
        if on_wait is not None:
            on_wait()
        while True:
            block_ms = BLOCK_SLICE_MS
            if deadline is not None:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return None
                block_ms = min(block_ms, max(1, math.ceil(remaining * 1000)))  # BLOCK 0 would be for ever
            entries = entries_of(reader.xread({keys.events: position}, count=READ_COUNT, block=block_ms))
            if not entries:
                continue
            position = entries[-1][0]
            # A full batch may mean we fell behind a trimmed stream: try the claim then too.
            if len(entries) >= READ_COUNT or any(wakes(fields, project) for _id, fields in entries):
                task = store.claim(project, agent)
                if task is not None:
                    return task
    except (redis.ConnectionError, redis.TimeoutError) as e:
        raise BusUnavailable(f"Redis cannot be reached while waiting for a task: {e}") from e
