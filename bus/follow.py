"""`ib events`: follow the events stream as JSONL for scripts, from now, from an id, or through a group."""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass

import redis

from bus import dead_letters
from bus.envelope import Envelope
from bus.keys import Keys
from bus.streams import Group, consumer_name, entries_of

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
) -> None:
    """Emit every matching event after `since` (`now`, `0` for all kept history, or an id) until stopped."""
    # "now" is pinned to the last id once, so nothing published between two reads slips past
    cursor = (_last_id(client, keys) or "0-0") if since == "now" else since
    while keep_going():
        reply = client.xread({keys.events: cursor}, count=1000, block=BLOCK_MS)
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
) -> None:
    """Like `follow`, through a named consumer group: each event is emitted then acknowledged."""
    group = Group(client, keys.events, group_name, consumer_name())
    group.ensure("$" if since == "now" else since)
    backlog = group.take_over(claim_idle_ms)
    while keep_going():
        entries = backlog or group.read(block_ms=BLOCK_MS)
        backlog = []
        for entry_id, fields in entries:
            found = dead_letters.read_entry(keys.events, entry_id, fields)
            if isinstance(found, dead_letters.Poison):
                dead_letters.dead_letter(client, keys, found)
            elif wanted(found):
                emit(found)
            group.ack([entry_id])


def _last_id(client: redis.Redis, keys: Keys) -> str | None:
    last = client.xrevrange(keys.events, count=1)
    return str(last[0][0]) if last else None
