"""Streams: publish, and read through consumer groups (block, ack after handling, take over the dead's).

Every reader blocks in Redis (`XREADGROUP ... BLOCK`); nothing here sleeps.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

import redis

from bus.events import append_once
from bus.events.envelope import EID_FIELD, EVENT_FIELD, Envelope, decode, encode, stamped
from bus.events.replication import Wait, confirmed
from bus.wire.keys import Keys
from bus.wire.lua_source import lua

Entry = tuple[str, dict[str, str]]


def publish(client: redis.Redis, keys: Keys, event: Envelope, maxlen: int, wait: Wait = (0, 0)) -> str:
    """Append one event to the events stream once by its client-made id; returns its stream id.
    `wait`: (replicas, ms) that must hold it before it counts as sent; raises NotReplicated if they do not.

    redis-py sends a command again when its reply is lost, so a plain XADD could land twice."""
    event = stamped(event)
    mark = keys.published(event[EID_FIELD])
    found = append_once.arguments(keys.namespace, mark, encode(event), maxlen, append_once.RETRY_MARK_TTL)
    if wait[0]:  # the script and its WAIT on one connection: WAIT counts that connection's writes
        reply = cast(
            "list[Any]", confirmed(client, [("EVAL", append_once.script(), 2, *found)], wait, "the event")[0]
        )
    else:
        reply = cast("list[Any]", client.eval(append_once.script(), 2, *found))
    first = reply[0]
    return first.decode() if isinstance(first, bytes) else str(first)


def move_state(
    client: redis.Redis,
    keys: Keys,
    agent_key: str,
    move: tuple[str, str, dict[str, str]],
    event: Envelope,
    maxlen: int,
    wait: Wait = (0, 0),
) -> str | None:
    """Write a state change to an agent's hash and append its event, in one round trip and one step:
    `move` is (the hash's state field, the state read before, the fields to write). Nothing is written
    and None returned when the state is no longer the one read (another writer, a hook, moved it first),
    or the record is gone; else the event's stream id."""
    event = stamped(event)
    mark = keys.published(event[EID_FIELD])
    found = append_once.arguments(keys.namespace, mark, encode(event), maxlen, append_once.RETRY_MARK_TTL)
    field, before, fields = move
    flat = [x for pair in fields.items() for x in pair]
    command = ("EVAL", lua("state_move") + lua("publish_once"), 3, *found[:2], agent_key, *found[2:])
    command += (field, before, *flat)
    if wait[0]:
        reply = cast("list[Any]", confirmed(client, [command], wait, "the state change")[0])
    else:
        reply = cast("list[Any]", client.execute_command(*command))
    if reply[1] == 2:
        return None
    first = reply[0]
    return first.decode() if isinstance(first, bytes) else str(first)


def envelopes(entries: Sequence[Entry]) -> list[Envelope]:
    return [decode(entry_id, fields.get(EVENT_FIELD)) for entry_id, fields in entries]


def consumer_name(pid: int | None = None) -> str:
    """Unique per process and machine, so a dead consumer's entries can be told apart and taken over;
    this process's, or that of process `pid` on this machine."""
    return f"{socket.gethostname()}-{os.getpid() if pid is None else pid}"


def first_time(client: redis.Redis, keys: Keys, scope: str, event_id: str, ttl: int = 7 * 24 * 3600) -> bool:
    """True the first time `scope` handles `event_id`: idempotent handling across redeliveries."""
    return bool(client.set(keys.seen(scope, event_id), "1", nx=True, ex=ttl))


@dataclass
class Group:
    """One consumer in one consumer group of one stream."""

    client: redis.Redis
    stream: str
    name: str
    consumer: str

    def ensure(self, start_id: str = "$") -> bool:
        """Create the group (and the stream) unless it exists; True when it was created now."""
        try:
            self.client.xgroup_create(self.stream, self.name, id=start_id, mkstream=True)
        except redis.ResponseError as e:
            if "BUSYGROUP" not in str(e):
                raise
            return False
        return True

    def take_over(self, min_idle_ms: int, count: int = 1000) -> list[Entry]:
        """Entries other consumers read but never acknowledged, idle at least `min_idle_ms`."""
        taken: list[Entry] = []
        cursor = "0-0"
        while True:
            reply = self.client.xautoclaim(
                self.stream, self.name, self.consumer, min_idle_time=min_idle_ms, start_id=cursor, count=count
            )
            cursor, entries = reply[0], reply[1]
            taken.extend(e for e in entries if e and e[1] is not None)
            if cursor == "0-0" or not entries:
                return taken

    def mine_pending(self, count: int = 1000) -> list[Entry]:
        """What this consumer read earlier and has not acknowledged (re-read after a restart)."""
        reply = self.client.xreadgroup(self.name, self.consumer, {self.stream: "0"}, count=count)
        return entries_of(reply)

    def read(self, block_ms: int, count: int = 1000) -> list[Entry]:
        """New entries, waiting up to `block_ms` in Redis for the first one."""
        reply = self.client.xreadgroup(
            self.name, self.consumer, {self.stream: ">"}, count=count, block=block_ms
        )
        return entries_of(reply)

    def ack(self, ids: Sequence[str]) -> None:
        if ids:
            self.client.xack(self.stream, self.name, *ids)

    def forget_idle_consumers(self) -> None:
        """Drop consumers with nothing pending (dead listeners), so the group does not grow forever."""
        for info in self.client.xinfo_consumers(self.stream, self.name):
            if info["name"] != self.consumer and int(info["pending"]) == 0:
                self.client.xgroup_delconsumer(self.stream, self.name, info["name"])


def entries_of(reply: object) -> list[Entry]:
    """The entries of an XREAD / XREADGROUP reply, across streams, without deleted ones."""
    if not reply:
        return []
    found: list[Entry] = []
    for _stream, entries in reply:  # type: ignore[attr-defined]
        found.extend((i, f) for i, f in entries if f is not None)
    return found
