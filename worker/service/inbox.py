"""The worker's one blocking read: its command stream and the events stream, in one XREADGROUP call.

Redis reads several streams in one call only through groups of the same name, so both streams get a
group named after the worker (`worker:<id>`): each worker sees every event once, and its own commands.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import cast

import redis

from bus.events.streams import Entry, Group
from bus.wire.keys import Keys

READ_COUNT = 1000
BUSY_EVENTS = 20  # events read within a second from which the stream counts as busy (`Pace`)


@dataclass
class Batch:
    commands: list[Entry] = field(default_factory=list)
    events: list[Entry] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.commands or self.events)


@dataclass
class Pace:
    """How busy the events stream is: the events read in the current second. Pure."""

    busy_from: int = BUSY_EVENTS
    since: float = 0.0
    count: int = 0

    def busy(self, read: int, now: float) -> bool:
        """Count `read` events read at monotonic time `now`; whether the stream is busy."""
        if now - self.since >= 1.0:
            self.since, self.count = now, 0
        self.count += read
        return self.count >= self.busy_from


class Inbox:
    def __init__(self, client: redis.Redis, keys: Keys, worker_id: str, consumer: str) -> None:
        self.client = client
        self.group = f"worker:{worker_id}"
        self.consumer = consumer
        self.commands = Group(client, keys.commands(worker_id), self.group, consumer)
        self.events = Group(client, keys.events, self.group, consumer)

    def ensure(self) -> None:
        """Commands from the beginning (they wait for the worker); events from now on, the first time."""
        self.commands.ensure("0")
        self.events.ensure("$")

    def take_over(self) -> Batch:
        """What an earlier run of this worker read and never acknowledged (it was killed): handled again."""
        batch = Batch(self.commands.take_over(min_idle_ms=0), self.events.take_over(min_idle_ms=0))
        for group in (self.commands, self.events):
            group.forget_idle_consumers()
        return batch

    def mine(self) -> Batch:
        """What this worker's consumer read and never acknowledged: after Redis went away, a read whose
        reply was lost with it (the entries count as delivered to us), and whatever was not acknowledged."""
        return Batch(self.commands.mine_pending(READ_COUNT), self.events.mine_pending(READ_COUNT))

    def read(self, block_ms: int) -> Batch:
        """New entries of either stream, waiting in Redis up to `block_ms` for the first one."""
        reply = self.client.xreadgroup(
            self.group,
            self.consumer,
            {self.commands.stream: ">", self.events.stream: ">"},
            count=READ_COUNT,
            block=block_ms,
        )
        batch = Batch()
        for stream, entries in cast(list[tuple[str, list[tuple[str, dict[str, str] | None]]]], reply or []):
            found = [(i, f) for i, f in entries if f is not None]
            (batch.commands if stream == self.commands.stream else batch.events).extend(found)
        return batch
