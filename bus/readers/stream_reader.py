"""One way to read a stream in the background, for every reader: block in Redis for what comes next (through
a consumer group, or after a cursor), hand it to the reader, acknowledge what it handled (a group's XACK, a
cursor's step past it), wait out a Redis restart and go on where it was, and stop between two reads.

What differs between readers is passed in: where they read (`Cursor` or `InGroup`), what
they do with a batch, what they do between two reads, and how they are stopped.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import Any

import redis

from bus.connection.reconnect import LOST, Reconnect
from bus.events.streams import Entry, Group, entries_of
from bus.readers.uninterrupted import stop_after

log = logging.getLogger(__name__)

BLOCK_MS = 1000  # a stop is seen this often
READ_COUNT = 1000
GONE = ("NOGROUP", "UNBLOCKED")  # the stream or its group was deleted (a Redis that came back without data)
GONE_PAUSE_S, BUG_PAUSE_S = 0.1, 1.0
STOP_WAIT_S = 2.0  # a stop waits this long at most for the entry being handled one by one and its ack

Handler = Callable[[list[Entry]], Sequence[str] | None]
"""Handles a batch; returns the ids to acknowledge (None: all of them). What it leaves out stays pending."""


@dataclass
class Cursor:
    """After a stream id, kept by this process: acknowledging moves the cursor past what was handled."""

    client: redis.Redis
    stream: str
    at: str = "0-0"

    def start(self) -> list[Entry]:
        return []  # nothing is pending after a cursor

    resume = start

    def read(self, block_ms: int, count: int) -> list[Entry]:
        return entries_of(self.client.xread({self.stream: self.at}, count=count, block=block_ms))

    def ack(self, ids: Sequence[str]) -> None:
        if ids:
            self.at = ids[-1]


@dataclass
class InGroup(Group):
    """One consumer of a consumer group: a new group starts at `start_id`; at the start it takes over what
    any consumer left unacknowledged for `claim_idle_ms`, after Redis came back (maybe without its data:
    the group is made again) what is still its own."""

    start_id: str = "$"
    claim_idle_ms: int = 0

    def start(self) -> list[Entry]:
        self.ensure(self.start_id)
        return self.take_over(self.claim_idle_ms)

    def resume(self) -> list[Entry]:
        self.ensure(self.start_id)
        return self.mine_pending()


Position = Cursor | InGroup


@dataclass
class StreamReader:
    position: Position
    handle: Handler
    who: str  # for the log: `conflict watch`
    keep_going: Callable[[], bool] = lambda: True
    pause: Callable[[float], object] = time.sleep  # how to wait: a stop event's wait returns at the stop
    reconnect: Reconnect | None = None  # None: a lost Redis is raised
    block_ms: Callable[[], int] = lambda: BLOCK_MS
    count: int = READ_COUNT
    between: Callable[[bool], None] = lambda _found: None  # after each read, told whether it found entries
    # seconds to wait after a read that found fewer than `count` entries: a reader always caught up with a
    # busy stream reads (and acknowledges) an entry or two at a time, two round trips each; waiting lets
    # them gather into one read. For readers that may be that late (a worker's session push), not a person's
    linger: float = 0.0
    # handle and acknowledge each entry alone, a stop held (STOP_WAIT_S at most) until both are done: a line
    # printed is acknowledged, never printed twice (`ib events --group`)
    one_by_one: bool = False
    ack_before_stop: bool = False  # what was handled is acknowledged, however long Redis is away
    on_bug: Callable[[Exception], None] | None = None  # told of an error, then it tries again; None: raised
    unacked: list[str] = field(default_factory=list)

    def drain(self) -> None:
        """Handle what waits now and return (burst mode: `ib worker --once`, tests)."""
        self._take(self.position.start())
        while entries := self.position.read(1, self.count):
            self._take(entries)

    def run(self) -> None:
        """Read, handle and acknowledge until `keep_going` says stop."""
        began = back = False
        while self._waiting():
            try:
                if not began:
                    self._take(self.position.start())
                    began = True
                elif back:
                    self._resume()
                back = False
                if not self.keep_going():
                    return
                entries = self.position.read(self.block_ms(), self.count)
                self._take(entries)
                self.between(bool(entries))
                if self.linger and 0 < len(entries) < self.count:
                    self.pause(self.linger)
            except Exception as e:
                if isinstance(e, LOST) and self.reconnect is not None:
                    if not self.reconnect.wait(e, self._waiting):
                        return
                elif isinstance(e, redis.ResponseError) and any(word in str(e) for word in GONE):
                    self.pause(GONE_PAUSE_S)  # the resume makes the group again
                elif self.on_bug is not None:
                    self.on_bug(e)
                    self.pause(BUG_PAUSE_S)
                else:
                    raise
                back = True

    def in_thread(self, name: str) -> threading.Thread:
        thread = threading.Thread(target=self.run, name=name, daemon=True)
        thread.start()
        return thread

    def _waiting(self) -> bool:
        return self.keep_going() or (self.ack_before_stop and bool(self.unacked))

    def _resume(self) -> None:
        """What was handled and not acknowledged when Redis went away is acknowledged, not handled again."""
        handled = set(self.unacked)
        pending = self.position.resume()
        self._ack()
        if self.keep_going():  # else what is pending waits for the next reader
            self._take([entry for entry in pending if entry[0] not in handled])

    def _take(self, entries: list[Entry]) -> None:
        for batch in [[entry] for entry in entries] if self.one_by_one else [entries] if entries else []:
            with stop_after(STOP_WAIT_S) if self.one_by_one else nullcontext():
                handled = self.handle(batch)
                self.unacked.extend([entry_id for entry_id, _ in batch] if handled is None else handled)
                self._ack()

    def _ack(self) -> None:
        if not self.unacked:
            return
        with stop_after():  # a stop that comes during the ack waits for it: handled, never handled twice
            self.position.ack(self.unacked)
            self.unacked = []


def background(
    stopping: threading.Event,
    client: redis.Redis,
    who: str,
    position: Position,
    handle: Handler,
    **options: Any,
) -> StreamReader:
    """The reader of a service's thread: stopped by `stopping`; it logs an outage or a bug and goes on."""
    return StreamReader(
        position,
        handle,
        who,
        keep_going=lambda: not stopping.is_set(),
        pause=stopping.wait,
        reconnect=Reconnect(client, who, log.warning, pause=stopping.wait),
        on_bug=lambda _error: log.exception("%s: a batch failed; trying again", who),
        **options,
    )
