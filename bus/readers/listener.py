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
from bus.events.streams import Entry, consumer_name
from bus.inbox import push_store
from bus.readers import dead_letters
from bus.readers.event_cursor import stream_id
from bus.readers.stream_reader import InGroup, StreamReader
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
        start, now = self._start_ids()
        group = InGroup(self.client, self.keys.events, f"listen:{self.name}", consumer_name(), start)
        if group.ensure(start):
            self.backlog_before = now
        renew_every = max(1.0, self.heartbeat_ttl / 3)
        shown: list[Envelope] = []

        def deliver(entries: list[Entry]) -> list[str] | None:
            wanted, ids = self._sort(entries)
            if wanted:  # printed and flushed before the ack: a crash here means "print again", never "lost"
                emit(wanted)
                shown.extend(wanted)
            return ids if self.filtered else None

        def next_block() -> int:
            heartbeat.renew()  # before each read: after the last one, and when Redis came back
            return max(1, int(min(deadline - time.monotonic(), renew_every) * 1000))

        StreamReader(
            group,
            deliver,
            "ib listen",
            keep_going=lambda: not shown and time.monotonic() < deadline,
            reconnect=self.reconnect,
            block_ms=next_block,
            ack_before_stop=True,  # printed: acknowledged through a Redis restart, never printed again
        ).run()
        if shown:
            with contextlib.suppress(
                *LOST
            ):  # printed: no longer to push into the session (bus.inbox.push_store)
                push_store.acknowledge(self.client, self.keys, [str(e["id"]) for e in shown])
            with contextlib.suppress(*LOST):  # housekeeping: the next listener does it
                group.forget_idle_consumers()
        return bool(shown)

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

    def _sort(self, entries: list[Entry]) -> tuple[list[Envelope], list[str]]:
        """The events to print, and the ids to acknowledge with them: theirs, the backlog's gone agents' and
        the unreadable entries'."""
        events, poison = dead_letters.sort(self.client, self.keys, self.keys.events, entries)
        gone = self._gone(events)
        wanted = [e for e in events if e.get("type") in self.types and str(e["id"]) not in gone]
        return wanted, [str(e["id"]) for e in wanted] + sorted(gone) + [p.entry_id for p in poison]
