"""`ib worker`: the one process per machine that owns its agents' tmux sessions and worktrees.

One loop: a blocking read of this worker's command stream (woken at least every pane interval), then
the pane watcher and the transcript tailer. On start it re-adopts the agents still running in tmux and
marks the rest stopped; on SIGTERM it stops and leaves the agents running. `--once` (burst) handles what
is pending and returns, for tests.
"""

from __future__ import annotations

import logging
import os
import signal
import socket
import threading
import time
from dataclasses import dataclass, field
from types import FrameType

import redis

from bus.commands import decode_command, reply
from bus.errors import BusError
from bus.streams import Group, consumer_name
from worker.errors import WorkerError
from worker.operations import run_operation
from worker.pane_watch import PaneWatcher
from worker.runtime import Runtime
from worker.transcript_tail import TranscriptTailer

log = logging.getLogger(__name__)
GROUP = "worker"


class WorkerBusy(WorkerError):
    """Another worker with the same id is alive."""


@dataclass
class WorkerService:
    rt: Runtime
    reader: redis.Redis  # a client without socket timeout, for the blocking reads
    stopping: threading.Event = field(default_factory=threading.Event)

    def __post_init__(self) -> None:
        self.watcher = PaneWatcher(self.rt)
        self.tailer = TranscriptTailer(self.rt)
        self.token = f"{socket.gethostname()}:{os.getpid()}"
        self.commands = Group(self.reader, self.rt.keys.commands(self.rt.worker_id), GROUP, consumer_name())

    @property
    def ttl(self) -> int:
        return max(5, int(self.rt.settings.heartbeat_ttl))

    def run(self, once: bool = False) -> None:
        self._claim_heartbeat()
        try:
            self.commands.ensure("0")
            self.adopt()
            self._handle(self.commands.take_over(min_idle_ms=0))
            if once:
                self._drain()
                self.tick()
                return
            self._loop()
        finally:
            self.rt.client.delete(self.rt.keys.worker(self.rt.worker_id))
            self.rt.client.srem(self.rt.keys.workers, self.rt.worker_id)

    def _loop(self) -> None:
        interval = self.rt.settings.pane_interval
        next_tick = 0.0
        while not self.stopping.is_set():
            wait = max(0.0, next_tick - time.monotonic())
            self._handle(self.commands.read(block_ms=max(1, int(wait * 1000))))
            if time.monotonic() >= next_tick:
                self.tick()
                next_tick = time.monotonic() + interval

    def _drain(self) -> None:
        while entries := self.commands.read(block_ms=1):
            self._handle(entries)

    def tick(self) -> None:
        self.rt.client.set(self.rt.keys.worker(self.rt.worker_id), self.token, ex=self.ttl)
        for step in (self.watcher.tick, self.tailer.tick):
            try:
                step()
            except (BusError, WorkerError, OSError) as e:
                log.warning("worker %s: %s failed: %s", self.rt.worker_id, step.__qualname__, e)

    def adopt(self) -> None:
        """Agents of this worker still in tmux are watched again; the others are marked stopped."""
        sessions = set(self.rt.tmux.sessions())
        for agent in self.rt.agents.all():
            if agent.worker != self.rt.worker_id:
                continue
            if agent.session in sessions:
                log.info("worker %s: re-adopted agent %s", self.rt.worker_id, agent.id)
            elif agent.state != "stopped":
                self.watcher._record(agent, "stopped")

    def _handle(self, entries: list[tuple[str, dict[str, str]]]) -> None:
        for entry_id, fields in entries:
            command = decode_command(fields)
            if command is not None and self.rt.client.set(
                self.rt.keys.seen("cmd", command["id"]), "1", nx=True, ex=86400
            ):
                self._run(command)
            self.commands.ack([entry_id])

    def _run(self, command: dict[str, object]) -> None:
        op, command_id = str(command["op"]), str(command["id"])
        args = command["args"] if isinstance(command["args"], dict) else {}
        try:
            result = run_operation(self.rt, op, args)
        except (BusError, WorkerError) as e:
            log.info("worker %s: command %s %s failed: %s", self.rt.worker_id, command_id, op, e)
            reply(self.rt.client, self.rt.keys, command_id, False, error=str(e))
            return
        except Exception as e:  # a bug in one command must not take the worker down
            log.exception("worker %s: command %s %s crashed", self.rt.worker_id, command_id, op)
            reply(self.rt.client, self.rt.keys, command_id, False, error=f"internal error: {e}")
            return
        log.info("worker %s: command %s %s done", self.rt.worker_id, command_id, op)
        reply(self.rt.client, self.rt.keys, command_id, True, result)

    def _claim_heartbeat(self) -> None:
        key = self.rt.keys.worker(self.rt.worker_id)
        if not self.rt.client.set(key, self.token, nx=True, ex=self.ttl):
            holder = str(self.rt.client.get(key))
            if not _dead_here(holder):
                raise WorkerBusy(
                    f"a worker named {self.rt.worker_id!r} is already running ({holder}); "
                    "set IB_WORKER_ID to run another"
                )
            self.rt.client.set(key, self.token, ex=self.ttl)
        self.rt.client.sadd(self.rt.keys.workers, self.rt.worker_id)

    def stop_on_signals(self) -> None:
        def stop(_signum: int, _frame: FrameType | None) -> None:
            self.stopping.set()

        signal.signal(signal.SIGTERM, stop)
        signal.signal(signal.SIGINT, stop)


def _dead_here(holder: str) -> bool:
    host, _, pid = holder.partition(":")
    if host != socket.gethostname() or not pid.isdigit():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False
