"""The worker's heartbeat on a thread of its own: renewed every third of its TTL whatever the loop is doing,
so a loop slowed by a busy machine (a long batch of events, two cores shared by many) is not taken for a
dead worker. A loop that made no progress for `STALL` seconds (stuck) stops the renewals, and a stopped
process (SIGSTOP, a frozen machine) renews nothing: both are found down by the sweep as before, after TTL.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass, field

import redis

from bus.commands import workers
from bus.stores.heartbeat import Heartbeat
from bus.wire.keys import Keys

log = logging.getLogger(__name__)

STALL = 120.0  # seconds without a turn of the worker's loop after which its heartbeat is left to expire


@dataclass
class Pulse:
    heartbeat: Heartbeat
    keys: Keys
    worker: str
    stopping: threading.Event
    stall: float = STALL
    progress_at: float = field(default_factory=time.monotonic)
    stalled: bool = False
    ended: bool = False
    lock: threading.Lock = field(default_factory=threading.Lock)

    def progress(self) -> None:
        """The loop went round once."""
        self.progress_at = time.monotonic()

    def beat(self) -> bool:
        """Renew the heartbeat unless the loop is stuck; True when it did."""
        idle = time.monotonic() - self.progress_at
        if idle > self.stall:
            if not self.stalled:
                log.warning(
                    "worker %s: its loop made no progress for %.0f s; its heartbeat is left to expire",
                    self.worker,
                    idle,
                )
            self.stalled = True
            return False
        self.stalled = False
        with self.lock:
            if self.ended:
                return False
            self.heartbeat.renew()
            workers.record_seen(self.heartbeat.client, self.keys, self.worker)
        return True

    def end(self) -> None:
        """The worker stops: its heartbeat goes now, and no renewal under way brings it back."""
        with self.lock:
            self.ended = True
            self.heartbeat.release()

    def start(self) -> None:
        threading.Thread(target=self._run, name="heartbeat", daemon=True).start()

    def _run(self) -> None:
        every = max(1.0, self.heartbeat.ttl / 3)
        while not self.stopping.wait(every) and not self.ended:
            try:
                self.beat()
            except (redis.ConnectionError, redis.TimeoutError):
                continue  # the loop says in the log that the bus is out of reach
