"""The worker's conflict watch: a thread blocked on `conflict-checks:<worker>` (what the agents' PostToolUse
hook adds after a file-changing tool call), checking every agent named in each batch at once, so the git work
never holds up the worker's main loop and a burst of edits costs one check.
"""

from __future__ import annotations

import logging
import threading

import redis

from bus.errors import BusError
from bus.events.streams import Entry, consumer_name
from bus.readers.stream_reader import InGroup, background
from worker.conflicts.check import ConflictCheck
from worker.errors import WorkerError
from worker.runtime import Runtime

log = logging.getLogger(__name__)

GROUP = "conflicts"
READ_COUNT = 200


class ConflictWatch:
    def __init__(self, rt: Runtime, reader: redis.Redis, stopping: threading.Event) -> None:
        self.rt = rt
        self.check = ConflictCheck(rt)
        group = InGroup(reader, rt.keys.conflict_checks(rt.worker_id), GROUP, consumer_name(), "0")
        self.reader = background(
            stopping, reader, "conflict watch", group, self._handle, count=READ_COUNT, between=self._idle
        )
        self.thread: threading.Thread | None = None
        self.checked = 0  # agents checked

    def start(self) -> None:
        """Run in a thread of its own until `stopping` is set."""
        self.thread = self.reader.in_thread("conflict-watch")

    def drain(self) -> int:
        """Check what is waiting now and return (burst mode: `ib worker --once`, tests); agents checked."""
        before = self.checked
        self.reader.drain()
        return self.checked - before

    def _idle(self, found: bool) -> None:
        if not found:  # keep the other agents' snapshots current off the edit's path
            self._refresh()

    def _refresh(self) -> None:
        try:
            if not self.check.refresh_stalest():
                self.check.prune()
        except (BusError, WorkerError, OSError) as e:
            log.warning("conflict watch: refreshing a snapshot failed: %s", e)

    def _handle(self, entries: list[Entry]) -> None:
        agents = [fields.get("agent", "") for _id, fields in entries]
        try:
            self.check.run(a for a in agents if a)
        except (BusError, WorkerError, OSError) as e:
            log.warning("conflict watch: checking %s failed: %s", ", ".join(sorted(set(agents))), e)
        self.checked += len(set(agents))
