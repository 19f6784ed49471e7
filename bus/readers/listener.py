"""`ib listen`: block until events for the person's primary session exist, print them, ack, exit.

Reads through its own consumer group (`listen:<name>`), so nothing published while no listener runs is
lost, and entries a killed listener printed but never acknowledged are printed again by the next one.
Given a `Reconnect`, it waits out a Redis restart until its timeout. A listener given its own types
(`--types`) acknowledges only what it printed: the rest stays pending for the next listener of that
name, which takes it over. Liveness is a heartbeat key with a TTL; a second listener of the same name
refuses to start.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass

import redis

from bus.connection.reconnect import LOST, Reconnect
from bus.errors import BusError
from bus.events.envelope import Envelope
from bus.events.streams import Entry, Group, consumer_name
from bus.inbox import push_store
from bus.readers import dead_letters
from bus.readers.event_cursor import stream_id
from bus.readers.uninterrupted import stop_after
from bus.stores.heartbeat import Heartbeat
from bus.wire.keys import Keys

ENDS = ("merged", "killed", "stopped")  # an agent's events that end it
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
    reconnect: Reconnect | None = None
    backlog_before: str = ""  # a group made by this run: its past events before this id are backlog

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
        self.client.delete(self.keys.listener_starting(self.name))  # the session's hook's mark: now alive
        try:
            return self._listen(timeout, emit, heartbeat)
        finally:
            with contextlib.suppress(*LOST):  # Redis is away: the key expires on its own
                heartbeat.release()

    def _listen(self, timeout: float, emit: Callable[[list[Envelope]], None], heartbeat: Heartbeat) -> bool:
        deadline = time.monotonic() + timeout
        group = self.group
        start, now = self._start_ids()
        if group.ensure(start):
            self.backlog_before = now
        entries: list[Entry] = group.take_over(min_idle_ms=0)
        renew_every = max(1.0, self.heartbeat_ttl / 3)
        lost = False
        while True:
            try:
                if lost:  # a Redis that came back without its data has no group any more
                    group.ensure(start)
                    heartbeat.renew()
                    entries = group.mine_pending()  # a read whose reply was lost with Redis
                    lost = False
                if self._deliver(group, entries, emit):
                    return True
                entries = []
                if (left := deadline - time.monotonic()) <= 0:
                    return False
                entries = group.read(block_ms=max(1, int(min(left, renew_every) * 1000)))
                heartbeat.renew()
            except LOST as e:
                if self.reconnect is None:
                    raise
                if not self.reconnect.wait(e, lambda: time.monotonic() < deadline):
                    return False  # the timeout ran out while Redis was away: the restart reminder
                lost = True

    def _start_ids(self) -> tuple[str, str]:
        """A new group starts `backlog_s` back, so events sent before the first listener still arrive;
        and the stream id of now."""
        seconds, micros = self.client.time()
        now_ms = int(seconds) * 1000 + int(micros) // 1000
        return f"{max(0, now_ms - self.backlog_s * 1000)}-0", f"{now_ms}-0"

    def _gone(self, events: list[Envelope]) -> set[str]:
        """Ids of the backlog events of a brand-new listener about agents the backlog itself shows torn
        down (merged, killed, stopped) and that are no longer on the bus: someone already acted on them.
        Events of names the bus never had (`ib notify --from anyone`) are kept."""
        if not self.backlog_before:
            return set()
        before = stream_id(self.backlog_before)
        past = [e for e in events if e.get("agent") and stream_id(str(e["id"])) < before]
        ended = {str(e["agent"]) for e in past if e.get("type") in ENDS}
        if not ended:
            return set()
        alive = {a if isinstance(a, str) else a.decode() for a in self.client.smembers(self.keys.agents)}
        gone = ended - alive
        return {str(e["id"]) for e in past if str(e["agent"]) in gone}

    def _deliver(
        self, group: Group, entries: list[tuple[str, dict[str, str]]], emit: Callable[[list[Envelope]], None]
    ) -> bool:
        if not entries:
            return False
        events, poison = dead_letters.sort(self.client, self.keys, self.keys.events, entries)
        gone = self._gone(events)
        wanted = [e for e in events if e.get("type") in self.types and str(e["id"]) not in gone]
        ids = [str(e["id"]) for e in wanted] + sorted(gone) + [p.entry_id for p in poison]
        acked = ids if self.filtered else [entry_id for entry_id, _ in entries]
        if wanted:
            emit(wanted)  # printed and flushed before the ack: a crash here means "print again", never "lost"
        # a Ctrl-C once they are printed waits for the ack: never printed twice
        with stop_after(), contextlib.suppress(*LOST):
            group.ack(acked)
            acked = []
        self._ack(group, acked)  # Redis went away meanwhile: wait for it, interruptible
        with contextlib.suppress(*LOST):  # printed: no longer to push into the session (bus.inbox.push_store)
            push_store.acknowledge(self.client, self.keys, [str(e["id"]) for e in wanted])
        with contextlib.suppress(*LOST):  # housekeeping: the next listener does it
            group.forget_idle_consumers()
        return bool(wanted)

    def _ack(self, group: Group, ids: list[str]) -> None:
        """Acknowledge what was printed, through a Redis restart if need be (never print it again)."""
        while True:
            try:
                group.ack(ids)
                return
            except LOST as e:
                if self.reconnect is None or not self.reconnect.wait(e):
                    raise
