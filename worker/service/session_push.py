"""The worker's thread that pushes what the person must act on into their own Claude Code sessions.

It reads the events stream through its own consumer group, makes each event the person must act on
pending (bus.inbox.push_store), and writes the pending ones each session has not had yet into that session's
inbox (bus.inbox.session_socket) as one folded message. Only sessions on this machine and in this
repository are pushed to; a session at most every MIN_GAP seconds (the inbox lets a sender about 30
messages, then one every 2 s), so a burst becomes one message. A stale session is dropped with a line
for `ib ps`; a failed write is tried again with backoff. Nothing here sleeps: it blocks in Redis.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Collection

import redis

from bus.events.streams import Group, consumer_name, envelopes
from bus.inbox import push_store
from bus.inbox.push_store import Pending, SessionInbox
from bus.inbox.session_inbox import this_host
from bus.inbox.session_socket import StaleSession, deliver
from worker.runtime import Runtime
from worker.service.push_message import event_line, fold

log = logging.getLogger(__name__)

BLOCK_MS = 1000  # the stop flag is looked at this often
PUSHER_TTL = 15  # seconds the heartbeat the reminder hook reads outlives a silent pusher
READ_COUNT = 500
MIN_GAP = 2.0  # seconds between two messages into one session: what arrives meanwhile is folded
BACKOFF = (1.0, 2.0, 5.0, 15.0, 60.0)  # seconds before trying a session again after a failed write


class SessionPusher:
    def __init__(
        self, rt: Runtime, reader: redis.Redis, stopping: threading.Event, types: Collection[str]
    ) -> None:
        self.rt = rt
        self.client = rt.client
        self.keys = rt.keys
        self.stopping = stopping
        self.types = frozenset(types)
        self.group = Group(reader, rt.keys.events, f"session-push:{rt.worker_id}", consumer_name())
        self.host = this_host()
        self.root = os.path.realpath(str(rt.root))
        self.next_at: dict[str, float] = {}  # session → earliest time of its next message
        self.failures: dict[str, int] = {}
        self.thread: threading.Thread | None = None
        self.waiting = True  # something is pending: look at the sessions every round (at most 1 s)

    def start(self) -> None:
        self.thread = threading.Thread(target=self._run, name="session-push", daemon=True)
        self.thread.start()

    def drain(self) -> None:
        """Take what is waiting now, push once and return (burst mode, tests)."""
        self.group.ensure("$")
        self.take(self.group.mine_pending(READ_COUNT) + self.group.take_over(min_idle_ms=0))
        while entries := self.group.read(block_ms=1, count=READ_COUNT):
            self.take(entries)
        self.push()

    def _run(self) -> None:
        paused = False
        while not self.stopping.is_set():
            try:
                self.drain()
                while not self.stopping.is_set():
                    self.client.set(
                        self.keys.session_pusher(self.host, self.root), self.rt.worker_id, ex=PUSHER_TTL
                    )
                    entries = self.group.read(block_ms=self._block_ms(), count=READ_COUNT)
                    paused = False
                    self.take(entries)
                    if entries or self.waiting:
                        self.push()
            except (redis.ConnectionError, redis.TimeoutError) as e:
                if not paused:
                    log.warning("session push: paused until Redis answers (%s)", e)
                paused = True
                self.stopping.wait(1.0)
            except Exception:  # the pusher must outlive a bug; said in the log
                log.exception("session push: a round failed")
                self.stopping.wait(1.0)

    def _block_ms(self) -> int:
        due = [t for t in self.next_at.values() if t > time.monotonic()] if self.waiting else []
        wait = min([BLOCK_MS / 1000, *(t - time.monotonic() for t in due)])
        return max(1, int(wait * 1000))

    def take(self, entries: list[tuple[str, dict[str, str]]]) -> None:
        """Make the wanted events pending, then acknowledge the stream entries (a crash between the two
        reads them again; making them pending twice changes nothing)."""
        if not entries:
            return
        wanted = [
            Pending(str(e["id"]), str(e.get("agent") or ""), event_line(e))
            for e in envelopes(entries)
            if e.get("type") in self.types
        ]
        if wanted:
            push_store.queue(self.client, self.keys, wanted)
            self.waiting = True
        self.group.ack([entry_id for entry_id, _ in entries])

    def push(self) -> None:
        """One message into each of this repository's sessions that lacks some pending event."""
        pending = push_store.pending(self.client, self.keys)
        self.waiting = bool(pending)  # unacknowledged: a session that comes later gets it
        if not pending:
            return
        for session in push_store.sessions(self.client, self.keys):
            if session.host == self.host and os.path.realpath(session.root or "/") == self.root:
                self._push_one(session, pending)

    def _push_one(self, session: SessionInbox, pending: list[Pending]) -> None:
        had = push_store.pushed(self.client, self.keys, session.session_id)
        todo = [(p.event_id, p.line) for p in pending if p.event_id not in had]
        if not todo:
            return
        if time.monotonic() < self.next_at.get(session.session_id, 0.0):
            return  # folded into the next message
        text, ids = fold(todo)
        push_store.mark_pushed(self.client, self.keys, session.session_id, ids)
        try:
            deliver(session.socket, session.token, text)
        except StaleSession as e:
            line = push_store.drop(self.client, self.keys, session, str(e))
            self._forget(session.session_id)
            log.warning("session push: %s", line)
            return
        except OSError as e:
            push_store.unmark_pushed(self.client, self.keys, session.session_id, ids)
            tries = self.failures.get(session.session_id, 0)
            self.failures[session.session_id] = tries + 1
            delay = BACKOFF[min(tries, len(BACKOFF) - 1)]
            self.next_at[session.session_id] = time.monotonic() + delay
            log.warning(
                "session push: writing to session %s failed (%s); again in %ss", session.session_id, e, delay
            )
            return
        self.failures.pop(session.session_id, None)
        self.next_at[session.session_id] = time.monotonic() + MIN_GAP
        log.info(
            "session push: %d event(s) into session %s (pid %s): %s",
            len(ids),
            session.session_id,
            session.pid,
            " ".join(ids),
        )

    def _forget(self, session_id: str) -> None:
        self.next_at.pop(session_id, None)
        self.failures.pop(session_id, None)
