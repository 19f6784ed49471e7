"""`ib events`: follow the events stream as JSONL for scripts, from now, from an id, or through a group.

Given a `Reconnect`, a follower outlives a Redis restart: it waits for Redis, then goes on from its
cursor (or its group, created again when Redis came back without it) with nothing lost or shown twice.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass

import redis

from bus.connection.reconnect import LOST, Reconnect
from bus.events.envelope import Envelope
from bus.events.streams import Entry, Group, consumer_name, entries_of
from bus.readers import dead_letters
from bus.readers.uninterrupted import stop_after
from bus.wire.keys import Keys

BLOCK_MS = 5000


@dataclass(frozen=True)
class EventFilter:
    """Which events a follower shows. Empty sets mean everything."""

    projects: Collection[str] = ()
    types: Collection[str] = ()

    def __call__(self, event: Envelope) -> bool:
        if self.projects and event.get("project") not in self.projects:
            return False
        return not self.types or event.get("type") in self.types


def follow(
    client: redis.Redis,
    keys: Keys,
    *,
    since: str,
    wanted: EventFilter,
    emit: Callable[[Envelope], None],
    keep_going: Callable[[], bool] = lambda: True,
    reconnect: Reconnect | None = None,
) -> None:
    """Emit every matching event after `since` (`now`, `0` for all kept history, or an id) until stopped."""
    # "now" is pinned to the last id once, so nothing published between two reads slips past
    cursor = (_last_id(client, keys) or "0-0") if since == "now" else since
    while keep_going():
        try:
            reply = client.xread({keys.events: cursor}, count=1000, block=BLOCK_MS)
        except LOST as e:
            if reconnect is None or not reconnect.wait(e, keep_going):
                raise
            continue
        entries = entries_of(reply)
        if not entries:
            continue
        events, _poison = dead_letters.sort(client, keys, keys.events, entries)
        for event in events:
            if wanted(event):
                emit(event)
        cursor = entries[-1][0]


def follow_group(
    client: redis.Redis,
    keys: Keys,
    *,
    group_name: str,
    since: str,
    wanted: EventFilter,
    emit: Callable[[Envelope], None],
    keep_going: Callable[[], bool] = lambda: True,
    claim_idle_ms: int = 30_000,
    reconnect: Reconnect | None = None,
) -> None:
    """Like `follow`, through a named consumer group: each event is emitted then acknowledged. With a
    filter, what it does not show stays pending in the group, for a follower of the same group without
    one to take over (never acknowledged unseen)."""
    filtered = bool(wanted.projects or wanted.types)
    group = Group(client, keys.events, group_name, consumer_name())
    start = "$" if since == "now" else since
    group.ensure(start)
    batch: list[Entry] = group.take_over(claim_idle_ms)
    done: list[str] = []  # emitted, not yet acknowledged: never emitted again
    lost = False
    while keep_going():
        try:
            if lost:  # a Redis that came back without its data has no group any more
                group.ensure(start)
            group.ack(done)
            done = []
            if lost:  # what is still ours and pending: a read whose reply was lost with Redis
                batch = batch or group.mine_pending()
                lost = False
            batch = batch or group.read(block_ms=BLOCK_MS)
            while batch:
                entry_id, fields = batch[0]
                found = dead_letters.read_entry(keys.events, entry_id, fields)
                shown: Envelope | None = None
                if isinstance(found, dead_letters.Poison):
                    dead_letters.dead_letter(client, keys, found)
                elif wanted(found):
                    shown = found
                elif filtered:
                    batch.pop(0)
                    continue  # not shown: left pending, not acknowledged
                if shown is not None:
                    emit(shown)  # stopped while printing: not acknowledged, so printed again
                with stop_after():  # stopped once printed: acknowledged first, never printed twice
                    batch.pop(0)
                    done.append(entry_id)
                    group.ack(done)
                    done = []
        except LOST as e:
            if reconnect is None or not reconnect.wait(e, keep_going):
                raise
            lost = True


def _last_id(client: redis.Redis, keys: Keys) -> str | None:
    last = client.xrevrange(keys.events, count=1)
    return str(last[0][0]) if last else None
