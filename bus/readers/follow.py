"""`ib events`: follow the events stream as JSONL for scripts, from now, from an id, or through a group.

Given a `Reconnect`, a follower outlives a Redis restart: it waits for Redis, then goes on from its
cursor (or its group, created again when Redis came back without it) with nothing lost or shown twice.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass

import redis

from bus.connection.reconnect import Reconnect
from bus.events.envelope import Envelope
from bus.events.streams import Entry, consumer_name
from bus.readers import dead_letters
from bus.readers.stream_reader import Cursor, InGroup, StreamReader
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

    def show(entries: list[Entry]) -> None:
        events, _poison = dead_letters.sort(client, keys, keys.events, entries)
        for event in events:
            if wanted(event):
                emit(event)

    StreamReader(
        Cursor(client, keys.events, cursor),
        show,
        "ib events",
        keep_going=keep_going,
        reconnect=reconnect,
        block_ms=lambda: BLOCK_MS,
    ).run()


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

    def show(entries: list[Entry]) -> list[str] | None:
        ((entry_id, fields),) = entries
        found = dead_letters.read_entry(keys.events, entry_id, fields)
        if isinstance(found, dead_letters.Poison):
            dead_letters.dead_letter(client, keys, found)
        elif wanted(found):
            emit(found)  # stopped while printing: not acknowledged, so printed again
        elif filtered:
            return []  # not shown: left pending, not acknowledged
        return None

    start = "$" if since == "now" else since
    StreamReader(
        InGroup(client, keys.events, group_name, consumer_name(), start, claim_idle_ms),
        show,
        "ib events",
        keep_going=keep_going,
        reconnect=reconnect,
        block_ms=lambda: BLOCK_MS,
        one_by_one=True,  # stopped once printed: acknowledged first, never printed twice
    ).run()


def _last_id(client: redis.Redis, keys: Keys) -> str | None:
    last = client.xrevrange(keys.events, count=1)
    return str(last[0][0]) if last else None
