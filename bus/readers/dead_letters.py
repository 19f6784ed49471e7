"""Entries no consumer can read (bad UTF-8, not JSON, not an event): copied once to the dead-letter
stream with the reason, then acknowledged by whoever met them, so every consumer goes on with the next.

Clients read with `surrogateescape` (bus.connection.clients.client_options), so a bad entry arrives as text
that still holds its original bytes; `sort` splits a batch into events and poison, each entry on its own.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

import redis
import redis.asyncio as aredis

from bus.events.envelope import EVENT_FIELD, Envelope, check
from bus.wire import fastjson
from bus.wire.keys import Keys

MARK_TTL = 7 * 24 * 3600
# copy once: the mark and the copy in one step, so a consumer killed in between leaves neither
COPY_ONCE = """
if redis.call('SET', KEYS[1], '1', 'NX', 'EX', ARGV[1]) then
  redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[2], '*',
             'stream', ARGV[3], 'entry', ARGV[4], 'reason', ARGV[5], 'raw', ARGV[6])
  return 1
end
return 0
"""
MAXLEN = 10_000


@dataclass(frozen=True)
class Poison:
    """One entry that is not an event: where it is, why, and its bytes."""

    stream: str
    entry_id: str
    reason: str
    raw: bytes


def raw_bytes(value: str | bytes | None) -> bytes:
    """The original bytes of a field read with `surrogateescape`."""
    if value is None:
        return b""
    return value if isinstance(value, bytes) else value.encode("utf-8", "surrogateescape")


def _printable(value: object) -> str:
    return raw_bytes(str(value)).decode("utf-8", "replace")


def read_entry(stream: str, entry_id: str, fields: Mapping[str, Any]) -> Envelope | Poison:
    """The event of one entry (its id set), or the Poison it is. Pure."""
    raw = fields.get(EVENT_FIELD)
    found = check(raw)
    if isinstance(found, str):
        if raw is None:  # show what the entry held instead
            shown = {_printable(k): _printable(v) for k, v in fields.items()}
            return Poison(stream, entry_id, found, fastjson.dumps(shown).encode())
        return Poison(stream, entry_id, found, raw_bytes(raw))
    found["id"] = entry_id
    for name in ("ts", "from", "msg"):
        found.setdefault(name, "unknown" if name == "from" else "")
    return found


def _copy_args(keys: Keys, poison: Poison) -> tuple[list[str], list[Any]]:
    mark = keys.dead_letter_mark(poison.stream, poison.entry_id)
    args = [MARK_TTL, MAXLEN, poison.stream, poison.entry_id, poison.reason, poison.raw]
    return [mark, keys.dead_letters], args


def dead_letter(client: redis.Redis, keys: Keys, poison: Poison) -> bool:
    """Copy `poison` to the dead letters unless a consumer did already; True when copied now."""
    names, args = _copy_args(keys, poison)
    return bool(client.eval(COPY_ONCE, len(names), *names, *args))


async def dead_letter_async(client: aredis.Redis, keys: Keys, poison: Poison) -> bool:
    """`dead_letter` for asyncio clients (the bot)."""
    names, args = _copy_args(keys, poison)
    return bool(await client.eval(COPY_ONCE, len(names), *names, *args))


def sort(
    client: redis.Redis, keys: Keys, stream: str, entries: Sequence[tuple[str, Mapping[str, Any]]]
) -> tuple[list[Envelope], list[Poison]]:
    """The events of a batch, in order, and its poison (copied to the dead letters)."""
    events: list[Envelope] = []
    poison: list[Poison] = []
    for entry_id, fields in entries:
        found = read_entry(stream, entry_id, fields)
        if isinstance(found, Poison):
            dead_letter(client, keys, found)
            poison.append(found)
        else:
            events.append(found)
    return events, poison


def listing(client: redis.Redis, keys: Keys, count: int = 10_000) -> list[dict[str, str]]:
    """The dead letters, oldest first, as printable records (bytes that are not UTF-8 as \\xNN)."""
    rows = []
    for dead_id, fields in cast(
        list[tuple[str, dict[str, str]]], client.xrange(keys.dead_letters, count=count)
    ):
        rows.append(
            {
                "id": dead_id,
                "stream": fields.get("stream", ""),
                "entry": fields.get("entry", ""),
                "reason": fields.get("reason", ""),
                "raw": raw_bytes(fields.get("raw")).decode("utf-8", "backslashreplace"),
            }
        )
    return rows
