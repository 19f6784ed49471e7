"""Events after a cursor, for a caller that comes back between reads (`ib mcp`'s `wait_for_events`).

The cursor is a stream id of the events stream: a read returns the matching events after it and the
cursor for the next read (the last entry it read, shown or not), so nothing published between two calls
is lost and nothing comes twice for the same cursor. A cursor from no read (ahead of the stream) is
refused; one from before a trim says so (`missed`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import redis

from bus.errors import InvalidInput
from bus.events.envelope import Envelope
from bus.events.streams import entries_of
from bus.readers import dead_letters
from bus.wire.keys import Keys
from bus.wire.names import stream_id_problem

BATCH = 200
"""Entries read at a time; a read that finds nothing wanted in them reads on until the timeout."""
START = "0-0"


@dataclass(frozen=True)
class Batch:
    """The matching events after a cursor, the cursor for the next read, and whether events after the
    given cursor were trimmed from the stream before they could be read."""

    events: list[Envelope]
    cursor: str
    missed: bool = False


def stream_id(text: str) -> tuple[int, int]:
    """`ms-seq` (or `ms`) as a pair that sorts as Redis sorts stream ids."""
    ms, _, seq = text.partition("-")
    return int(ms), int(seq or 0)


def newest(client: redis.Redis, keys: Keys) -> str:
    """The cursor that means "from now on": the last id the stream ever gave (`0-0` for no stream)."""
    return str(_info(client, keys).get("last-generated-id") or START)


def check_cursor(client: redis.Redis, keys: Keys, cursor: str) -> bool:
    """Whether events after `cursor` were trimmed away; InvalidInput for a cursor no read can have given
    (not a stream id, or ahead of the stream's last id)."""
    problem = stream_id_problem(cursor)
    if problem:
        raise InvalidInput(f"bad cursor: {problem}; pass the cursor a previous call returned, or none")
    info = _info(client, keys)
    last = str(info.get("last-generated-id") or START)
    if stream_id(cursor) > stream_id(last):
        raise InvalidInput(
            f"bad cursor {cursor}: it is ahead of the events stream (its last id is {last}); "
            "pass the cursor a previous call returned, or none to start from now"
        )
    return stream_id(cursor) < kept_from(info, last)


def kept_from(info: dict[str, Any], last: str) -> tuple[int, int]:
    """Below this id the stream may have lost entries (trimmed, or deleted): the first entry it keeps when
    it lost any, else the last entry ever deleted (XDEL). A cursor just before a trimmed stream's first
    entry is counted as having missed some: the stream cannot say which ids it once held."""
    deleted = stream_id(str(info.get("max-deleted-entry-id") or START))
    if int(info.get("entries-added") or 0) <= int(info.get("length") or 0):
        return deleted
    first = info.get("first-entry")
    if first:
        return max(deleted, stream_id(str(first[0])))
    ms, seq = stream_id(last)  # trimmed to nothing: every id up to the last is gone
    return ms, seq + 1


def read_after(
    client: redis.Redis, keys: Keys, cursor: str, wanted: Callable[[Envelope], bool], timeout: float
) -> Batch:
    """The wanted events after `cursor`, waiting up to `timeout` seconds for the first (0: none). `client`
    must have no socket timeout shorter than `timeout`."""
    missed = check_cursor(client, keys, cursor)
    deadline = time.monotonic() + timeout
    while True:
        left = deadline - time.monotonic()
        block = max(1, int(left * 1000)) if left > 0 else None  # BLOCK 0 would wait forever
        entries = entries_of(client.xread({keys.events: cursor}, count=BATCH, block=block))
        if entries:
            events, _poison = dead_letters.sort(client, keys, keys.events, entries)
            cursor = entries[-1][0]
            found = [event for event in events if wanted(event)]
            if found:
                return Batch(found, cursor, missed)
            if len(entries) == BATCH:
                continue  # more may wait behind these, whatever the time
        if time.monotonic() >= deadline:
            return Batch([], cursor, missed)


def _info(client: redis.Redis, keys: Keys) -> dict[str, Any]:
    try:
        return client.xinfo_stream(keys.events)
    except redis.ResponseError:  # no stream yet: nothing was ever published
        return {}
