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

from bus.events.streams import Entry, consumer_name, envelopes
from bus.inbox import push_store
from bus.inbox.push_store import Pending, SessionInbox
from bus.inbox.session_inbox import this_host
from bus.inbox.session_socket import StaleSession, deliver
from bus.readers.stream_reader import InGroup, background
from worker.runtime import Runtime
from worker.service.push_message import event_line, fold

log = logging.getLogger(__name__)

BLOCK_MS = 1000  # a stop is seen this often
PUSHER_TTL = 15  # seconds the heartbeat the reminder hook reads outlives a silent pusher
READ_COUNT = 500
MIN_GAP = 2.0  # seconds between two messages into one session: what arrives meanwhile is folded
LINGER = 0.1  # seconds the reader lets a busy stream's events gather between two reads (bus.readers)
BACKOFF = (1.0, 2.0, 5.0, 15.0, 60.0)  # seconds before trying a session again after a failed write


class SessionPusher:
    def __init__(
        self, rt: Runtime, reader: redis.Redis, stopping: threading.Event, types: Collection[str]
    ) -> None:
        self.rt = rt
        self.client = rt.client
        self.keys = rt.keys
        self.types = frozenset(types)
        group = InGroup(reader, rt.keys.events, f"session-push:{rt.worker_id}", consumer_name())
        self.reader = background(
            stopping,
            reader,
            "session push",
            group,
            self.take,
            count=READ_COUNT,
            between=self._round,
            block_ms=self._block_ms,
            linger=LINGER,
        )
        self.host = this_host()
        self.root = os.path.realpath(str(rt.root))
        self.next_at: dict[str, float] = {}  # session → earliest time of its next message
        self.failures: dict[str, int] = {}
        self.thread: threading.Thread | None = None
        # something may wait for a session here: push on the next round, not only at the next look
        self.waiting = True
        self.look_at = 0.0  # monotonic time of the next look for sessions (one may have come since)
        self.beat_at = 0.0  # monotonic time the heartbeat the reminder hook reads is renewed next

    def start(self) -> None:
        self.thread = self.reader.in_thread("session-push")

    def drain(self) -> None:
        """Take what is waiting now, push once and return (burst mode, tests)."""
        self.reader.drain()
        self.push()

    def _round(self, _found: bool) -> None:
        """After each read: a push when something came for the sessions or waits for one, and a look for
        new sessions once a BLOCK_MS. A busy stream ends a read every few milliseconds: a round that read
        the pending events and the sessions each time cost every worker a core's share for nothing (all
        of them at 10,000 agents, where no session was open)."""
        now = time.monotonic()
        if now >= self.beat_at:
            self.client.set(self.keys.session_pusher(self.host, self.root), self.rt.worker_id, ex=PUSHER_TTL)
            self.beat_at = now + BLOCK_MS / 1000
        if self.waiting or now >= self.look_at:
            self.look_at = now + BLOCK_MS / 1000
            self.push()

    def _block_ms(self) -> int:
        due = [t for t in self.next_at.values() if t > time.monotonic()] if self.waiting else []
        wait = min([BLOCK_MS / 1000, *(t - time.monotonic() for t in due)])
        return max(1, int(wait * 1000))

    def take(self, entries: list[Entry]) -> None:
        """Make the wanted events pending; the reader then acknowledges the stream entries (a crash between
        the two reads them again; making them pending twice changes nothing)."""
        wanted = [
            Pending(str(e["id"]), str(e.get("agent") or ""), event_line(e))
            for e in envelopes(entries)
            if e.get("type") in self.types
        ]
        if wanted:
            push_store.queue(self.client, self.keys, wanted)
            self.waiting = True

    def push(self) -> None:
        """One message into each of this repository's sessions that lacks some pending event. The pending
        events are read only when such a session is open; they stay pending (unacknowledged) for one
        that comes later, which the next look finds."""
        here = [
            session
            for session in push_store.sessions(self.client, self.keys)
            if session.host == self.host and os.path.realpath(session.root or "/") == self.root
        ]
        pending = push_store.pending(self.client, self.keys) if here else []
        left = [self._push_one(session, pending) for session in here if pending]
        self.waiting = any(left)

    def _push_one(self, session: SessionInbox, pending: list[Pending]) -> bool:
        """Push what `session` lacks; True when some of it waits for a later round (folded, or the
        write failed)."""
        had = push_store.pushed(self.client, self.keys, session.session_id)
        todo = [(p.event_id, p.line) for p in pending if p.event_id not in had]
        if not todo:
            return False
        if time.monotonic() < self.next_at.get(session.session_id, 0.0):
            return True  # folded into the next message
        text, ids = fold(todo)
        push_store.mark_pushed(self.client, self.keys, session.session_id, ids)
        try:
            deliver(session.socket, session.token, text)
        except StaleSession as e:
            line = push_store.drop(self.client, self.keys, session, str(e))
            self._forget(session.session_id)
            log.warning("session push: %s", line)
            return False
        except OSError as e:
            push_store.unmark_pushed(self.client, self.keys, session.session_id, ids)
            tries = self.failures.get(session.session_id, 0)
            self.failures[session.session_id] = tries + 1
            delay = BACKOFF[min(tries, len(BACKOFF) - 1)]
            self.next_at[session.session_id] = time.monotonic() + delay
            log.warning(
                "session push: writing to session %s failed (%s); again in %ss", session.session_id, e, delay
            )
            return True
        self.failures.pop(session.session_id, None)
        self.next_at[session.session_id] = time.monotonic() + MIN_GAP
        log.info(
            "session push: %d event(s) into session %s (pid %s): %s",
            len(ids),
            session.session_id,
            session.pid,
            " ".join(ids),
        )
        return False

    def _forget(self, session_id: str) -> None:
        self.next_at.pop(session_id, None)
        self.failures.pop(session_id, None)
