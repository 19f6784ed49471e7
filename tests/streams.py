"""Reading the bus's streams in tests: XRANGE's entries typed as the bus writes them.

redis-py types an XRANGE reply loosely (bytes or str, possibly None); the test clients decode responses,
so each entry is an id and a dict of str fields, as `bus.events.streams.Entry` says.
"""

from __future__ import annotations

from typing import cast

import redis

from bus.events.streams import Entry


def stream_entries(client: redis.Redis, stream: str, first: str = "-", last: str = "+") -> list[Entry]:
    """The entries of `stream` from `first` to `last` (an empty list for a stream that does not exist)."""
    return cast(list[Entry], client.xrange(stream, first, last) or [])


def newest_entry(client: redis.Redis, stream: str) -> Entry | None:
    """The last entry of `stream`, or None when it is empty or does not exist."""
    found = cast(list[Entry], client.xrevrange(stream, count=1) or [])
    return found[0] if found else None
