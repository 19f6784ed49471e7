"""The worker's conflict watch: a thread blocked on `conflict-checks:<worker>` (what the agents' PostToolUse
hook adds after a file-changing tool call), checking every agent named in each batch at once, so the git work
never holds up the worker's main loop and a burst of edits costs one check.
"""

from __future__ import annotations

import logging
import threading

import redis

from bus.errors import BusError
from bus.events.streams import Group, consumer_name
from worker.conflicts.check import ConflictCheck
from worker.errors import WorkerError
from worker.runtime import Runtime

log = logging.getLogger(__name__)

GROUP = "conflicts"
READ_COUNT = 200
BLOCK_MS = 1000  # the stop flag is looked at this often


class ConflictWatch:
    def __init__(self, rt: Runtime, reader: redis.Redis, stopping: threading.Event) -> None:
        self.rt = rt
        self.stopping = stopping
        self.check = ConflictCheck(rt)
        self.group = Group(reader, rt.keys.conflict_checks(rt.worker_id), GROUP, consumer_name())
        self.thread: threading.Thread | None = None
        self.paused = False  # Redis went away; the watch waits for it

    def start(self) -> None:
        """Run in a thread of its own until `stopping` is set."""
        self.thread = threading.Thread(target=self._run, name="conflict-watch", daemon=True)
        self.thread.start()

    def drain(self) -> int:
        """Check what is waiting now and return (burst mode: `ib worker --once`, tests); agents checked."""
        self.group.ensure("0")
        done = 0
        pending = self.group.mine_pending(READ_COUNT) + self.group.take_over(min_idle_ms=0)
        if pending:
            done += self._handle(pending)
        while entries := self.group.read(block_ms=1, count=READ_COUNT):
            done += self._handle(entries)
        return done

    def _run(self) -> None:
        while not self.stopping.is_set():
            try:
                self.drain()
                while not self.stopping.is_set():
                    entries = self.group.read(block_ms=BLOCK_MS, count=READ_COUNT)
                    if self.paused:
                        log.info("conflict watch: going on")
                        self.paused = False
                    if entries:
                        self._handle(entries)
                    else:  # idle: keep the other agents' snapshots current off the edit's path
                        self._refresh()
            except (redis.ConnectionError, redis.TimeoutError) as e:
                if not self.paused:  # said once per outage; the main loop says the outage itself
                    log.warning("conflict watch: paused until Redis answers (%s)", e)
                self.paused = True
                self.stopping.wait(1.0)
            except redis.ResponseError as e:
                if "NOGROUP" not in str(e):
                    log.exception("conflict watch: Redis refused a read")
                self.stopping.wait(0.1)  # a Redis that lost its data lost the group: drain() makes it again
            except Exception:  # the watch must outlive a bug in one check; said in the log
                log.exception("conflict watch: a check failed")
                self.stopping.wait(1.0)

    def _refresh(self) -> None:
        try:
            if not self.check.refresh_stalest():
                self.check.prune()
        except (BusError, WorkerError, OSError) as e:
            log.warning("conflict watch: refreshing a snapshot failed: %s", e)

    def _handle(self, entries: list[tuple[str, dict[str, str]]]) -> int:
        agents = [fields.get("agent", "") for _id, fields in entries]
        try:
            self.check.run(a for a in agents if a)
        except (BusError, WorkerError, OSError) as e:
            log.warning("conflict watch: checking %s failed: %s", ", ".join(sorted(set(agents))), e)
        self.group.ack([entry_id for entry_id, _fields in entries])
        return len(set(agents))
