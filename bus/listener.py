"""`ib listen`: block until events for the person's primary session exist, print them, ack, exit.

Reads through its own consumer group (`listen:<name>`), so nothing published while no listener runs is
lost, and entries a killed listener printed but never acknowledged are printed again by the next one.
A listener given its own types (`--types`) acknowledges only what it printed: the rest stays pending
for the next listener of that name, which takes it over. Liveness is a heartbeat key with a TTL; a
second listener of the same name refuses to start.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection
from dataclasses import dataclass

import redis

from bus import dead_letters
from bus.envelope import Envelope
from bus.errors import BusError
from bus.heartbeat import Heartbeat
from bus.keys import Keys
from bus.streams import Group, consumer_name

TIMEOUT_MESSAGE = "No messages received. Background listener has stopped. Please restart with: ib listen"


class ListenerBusy(BusError):
    """Another listener with the same name is alive."""


@dataclass
class Listener:
    client: redis.Redis
    keys: Keys
    name: str
    types: Collection[str]
    heartbeat_ttl: int = 15
    backlog_s: int = 3600
    filtered: bool = False  # types chosen by the person: leave the others for the plain listener

    @property
    def group(self) -> Group:
        return Group(self.client, self.keys.events, f"listen:{self.name}", consumer_name())

    def run(self, timeout: float, emit: Callable[[list[Envelope]], None]) -> bool:
        """Wait up to `timeout` seconds; True when events were emitted (and acknowledged)."""
        heartbeat = Heartbeat(self.client, self.keys.listener(self.name), self.heartbeat_ttl)
        holder = heartbeat.acquire()
        if holder is not None:
            raise ListenerBusy(
                f"a listener named {self.name!r} is already running ({holder}); not starting another"
            )
        try:
            return self._listen(timeout, emit, heartbeat)
        finally:
            heartbeat.release()

    def _listen(self, timeout: float, emit: Callable[[list[Envelope]], None], heartbeat: Heartbeat) -> bool:
        group = self.group
        group.ensure(self._start_id())
        if self._deliver(group, group.take_over(min_idle_ms=0), emit):
            return True
        deadline = time.monotonic() + timeout
        renew_every = max(1.0, self.heartbeat_ttl / 3)
        while (left := deadline - time.monotonic()) > 0:
            entries = group.read(block_ms=max(1, int(min(left, renew_every) * 1000)))
            heartbeat.renew()
            if self._deliver(group, entries, emit):
                return True
        return False

    def _start_id(self) -> str:
        """A new group starts `backlog_s` back, so events sent before the first listener still arrive."""
        seconds, micros = self.client.time()
        start_ms = max(0, int(seconds) * 1000 + int(micros) // 1000 - self.backlog_s * 1000)
        return f"{start_ms}-0"

    def _deliver(
        self, group: Group, entries: list[tuple[str, dict[str, str]]], emit: Callable[[list[Envelope]], None]
    ) -> bool:
        if not entries:
            return False
        events, poison = dead_letters.sort(self.client, self.keys, self.keys.events, entries)
        wanted = [e for e in events if e.get("type") in self.types]
        if wanted:
            emit(wanted)  # printed and flushed before the ack: a crash here means "print again", never "lost"
        if self.filtered:
            group.ack([str(e["id"]) for e in wanted] + [p.entry_id for p in poison])
        else:
            group.ack([entry_id for entry_id, _ in entries])
        group.forget_idle_consumers()
        return bool(wanted)
