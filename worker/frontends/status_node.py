"""`ib status-node`: the bus consumer that keeps the status block (root agents, messages for the person) in
CLAUDE.md, debounced, writing only when the block changed; and `StatusNodeStarter`, the worker's part that
starts it when the first root agent appears. The node stops by itself after the last root agent is gone."""

from __future__ import annotations

import hashlib
import logging
import os
import socket
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import redis

from bus.events.envelope import AGENT_TYPES
from bus.events.streams import Entry, consumer_name
from bus.inbox.messages import Message, MessageStore
from bus.readers import dead_letters
from bus.readers.stream_reader import InGroup, StreamReader
from bus.settings.repo_paths import ensure_state_dir
from bus.stores.agent_store import Agent, AgentStore
from bus.stores.heartbeat import Heartbeat
from bus.wire.keys import Keys
from worker.errors import StatusFileError, WorkerError
from worker.frontends.claude_md import write_if_changed
from worker.frontends.status_block import (
    STATUS_FILE,
    AgentRecord,
    UserMessage,
    build_status,
    read_block,
    render_block,
    settle,
)
from worker.message_kinds import MessageKind
from worker.runtime import NotARepository, Runtime
from worker.service.signals import stop_on_signals

log = logging.getLogger(__name__)

LOG_FILE = "status-node.log"
TRIGGERS = frozenset(AGENT_TYPES)  # events that can change the block: agents come, go, change, send
MAX_WAIT = 1.0  # seconds one read blocks at most, so that a stop request is seen soon
RESTART_AFTER = 30.0  # seconds the worker waits before starting a node again after one failed

_KINDS: dict[str, MessageKind] = {k: k for k in ("question", "status", "alert", "complete")}


class StatusNodeBusy(WorkerError):
    """Another status node keeps the same file."""


def file_id(path: Path) -> str:
    """Names one file on one machine: its heartbeat key and its consumer group, so there is one node per
    file, and nodes of two files never split the events between them."""
    where = f"{socket.gethostname()}:{os.path.realpath(path)}"
    return hashlib.sha256(where.encode()).hexdigest()[:16]


def _record(agent: Agent) -> AgentRecord:
    return AgentRecord(agent.id, agent.state, agent.created_at, agent.goal, agent.manager or None)


def _message(message: Message) -> UserMessage:
    return UserMessage(
        message.id, message.ts, _KINDS.get(message.kind, "status"), message.text, message.sender
    )


@dataclass
class StatusNode:
    """One consumer keeping the block in `path`. `auto`: started by the worker, it returns after the write
    that shows no root agent left. `create`: make the file when it is missing (by hand; the worker never
    adds a CLAUDE.md to a repository). `writes` counts the times the file was written."""

    client: redis.Redis
    reader: redis.Redis  # a client without socket timeout, for the blocking reads
    keys: Keys
    path: Path
    debounce: float = 2.0
    max_messages: int = 50
    auto: bool = False
    create: bool = True
    heartbeat_ttl: int = 15
    stopping: threading.Event = field(default_factory=threading.Event)
    writes: int = 0
    root_agents: int = 0

    def __post_init__(self) -> None:
        self.id = file_id(self.path)
        self.heartbeat = Heartbeat(self.client, self.keys.status_node(self.id), self.heartbeat_ttl)
        self.group = InGroup(self.reader, self.keys.events, f"status-node:{self.id}", consumer_name())
        self.agents = AgentStore(self.client, self.keys)
        self.messages = MessageStore(self.client, self.keys)
        self._problem = ""
        self.renew_every = max(1.0, self.heartbeat_ttl / 3)
        self.dirty = False  # an event changed what the block shows

    def update(self) -> bool:
        """Rebuild the block from the agents and the pending messages; True when the file was written."""
        status = build_status(
            [_record(a) for a in self.agents.all()],
            [_message(m) for m in self.messages.pending()],
            time.time(),
            max_messages=self.max_messages,
        )
        self.root_agents = len(status["root_agents"])
        if not self.create and not self.path.exists():
            return False
        written = write_if_changed(self.path, render_block(settle(status, self._current_block())))
        self.writes += int(written)
        return written

    def run(self) -> bool:
        """Keep the block until stopped (with `auto`: until no root agent is left). When another node keeps
        the file: `StatusNodeBusy` by hand, quietly False when the worker started this one."""
        holder = self._claim()
        if holder is not None:
            if self.auto:
                log.info("status node for %s already running (%s)", self.path, holder)
                return False
            raise StatusNodeBusy(
                f"a status node already keeps {self.path} ({holder}); stop it first, or use another --file"
            )
        try:
            self.group.ensure("$")
            # what a dead node left unacknowledged only said "something changed": the first update covers it
            self.group.ack([entry_id for entry_id, _ in self.group.take_over(min_idle_ms=0)])
            self.group.forget_idle_consumers()  # earlier runs of this node, by process id
            self._write(strict=not self.auto)
            self._follow()
        finally:
            self.heartbeat.release()
        return True

    def stop_on_signals(self) -> None:
        stop_on_signals(self.stopping)

    def _follow(self) -> None:
        """Events mark the block dirty; a dirty block is written at once when the last write is older than
        `debounce`, else when it gets that old: at most one write per `debounce`, and the last change is
        always written (also on stop)."""
        self.last_write = time.monotonic()
        self.next_renew = self.last_write + self.renew_every
        StreamReader(
            self.group,
            self.take,
            "status node",
            keep_going=self._going,
            pause=self.stopping.wait,
            block_ms=self._wait_ms,
            between=self._after_read,
        ).run()
        if not self.stopping.is_set():
            log.info("status node for %s: no root agent left, stopping", self.path)
        if self.dirty:
            self._write(strict=False)

    def _going(self) -> bool:
        return not self.stopping.is_set() and not (self.auto and not self.root_agents and not self.dirty)

    def _wait_ms(self) -> int:
        now = time.monotonic()
        due = self.last_write + self.debounce if self.dirty else now + MAX_WAIT
        return max(1, int((min(due, self.next_renew, now + MAX_WAIT) - now) * 1000))

    def take(self, entries: list[Entry]) -> None:
        """An event is only a reason to rebuild (and every start rebuilds anyway): one that can change the
        block marks it dirty."""
        events, _poison = dead_letters.sort(self.reader, self.keys, self.keys.events, entries)
        self.dirty = self.dirty or any(event.get("type") in TRIGGERS for event in events)

    def _after_read(self, _found: bool) -> None:
        now = time.monotonic()
        if now >= self.next_renew:
            self.heartbeat.renew()
            self.next_renew = now + self.renew_every
            # agents removed without an event (a flushed namespace) must not keep a node alive
            self.dirty = self.dirty or (self.auto and not self.client.scard(self.keys.agents))
        if self.dirty and now >= self.last_write + self.debounce:
            self._write(strict=False)
            self.dirty, self.last_write = False, time.monotonic()

    def _write(self, *, strict: bool) -> None:
        try:
            written = self.update()
        except StatusFileError as e:
            if strict:
                raise
            if str(e) != self._problem:
                log.warning("status node: %s The messages stay in Redis; retried at the next change.", e)
            self._problem = str(e)
            return
        self._problem = ""
        if written:
            log.info("status node: wrote %s (%d root agent(s))", self.path, self.root_agents)

    def _current_block(self) -> str | None:
        try:
            return read_block(self.path.read_bytes())
        except OSError:
            return None  # missing or unreadable: write_if_changed says what is wrong, if anything

    def _claim(self) -> str | None:
        """None when this node now holds the file's heartbeat, else who holds it."""
        return self.heartbeat.acquire()


@dataclass
class StatusNodeStarter:
    """The worker's part: when an agent exists (so a root agent does: every tree has one), the repository
    has a CLAUDE.md and no node keeps it, start `ib status-node --auto` in a session of its own. It outlives
    the worker and stops after the last root agent; its output goes to `.ib/status-node.log`."""

    rt: Runtime
    child: subprocess.Popen[bytes] | None = None
    retry_at: float = 0.0
    disabled: bool = False

    def tick(self) -> None:
        if self.disabled or not self.rt.settings.status_node_auto or self._child_running():
            return
        if time.monotonic() < self.retry_at or not self.rt.client.scard(self.rt.keys.agents):
            return
        try:
            root = self.rt.root
        except NotARepository:
            log.info("worker %s: not in a repository, no status node", self.rt.worker_id)
            self.disabled = True
            return
        path = root / STATUS_FILE
        if path.exists() and not self.rt.client.exists(self.rt.keys.status_node(file_id(path))):
            self.child = self._start(root, path)

    def _child_running(self) -> bool:
        if self.child is None:
            return False
        code = self.child.poll()
        if code is None:
            return True
        if code != 0:
            log.warning(
                "worker %s: the status node exited with %s (see .ib/%s); trying again in %ss",
                self.rt.worker_id,
                code,
                LOG_FILE,
                RESTART_AFTER,
            )
            self.retry_at = time.monotonic() + RESTART_AFTER
        self.child = None
        return False

    def _start(self, root: Path, path: Path) -> subprocess.Popen[bytes] | None:
        command = [self.rt.ib_command, "status-node", "--auto", "--file", str(path)]
        try:
            folder = Path(ensure_state_dir(str(root)))
            with (folder / LOG_FILE).open("ab") as out:
                child = subprocess.Popen(
                    command,
                    cwd=root,
                    stdin=subprocess.DEVNULL,
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,  # a Ctrl-C in the worker's terminal is not meant for it
                )
        except OSError as e:
            log.warning("worker %s: cannot start the status node: %s", self.rt.worker_id, e)
            self.retry_at = time.monotonic() + RESTART_AFTER
            return None
        log.info("worker %s: started the status node for %s (pid %d)", self.rt.worker_id, path, child.pid)
        return child
