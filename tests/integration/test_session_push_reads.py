"""The session pusher reads the pending events only when a session of this machine and repository is open
to take them: every worker runs a pusher, and at 10,000 agents (bench/scale_bench.py, no session open)
reading the whole pending set after every read of the stream cost each worker most of its time. A session
that comes later still gets what is pending (test_session_push.py), up to the newest PENDING_KEPT. The
client is redis-py, unchanged, remembering the commands it sent, on the real Redis."""

from __future__ import annotations

import threading
from pathlib import Path

import redis

from bus.connection.clients import client_for
from bus.inbox import push_store
from bus.inbox.push_store import PENDING_KEPT, Pending
from bus.settings.settings import Settings
from bus.wire.keys import Keys
from tests.integration.test_ownership_reads import RememberingRedis
from tests.integration.test_session_push import sockets
from tests.session_inbox import RecordingInbox, record_session
from tests.waiting import retry_until
from worker.runtime import Runtime
from worker.service.session_push import SessionPusher

__all__ = ["sockets"]  # the fixture, used by name


def _pusher(redis_url: str, namespace: str, root: Path) -> tuple[SessionPusher, RememberingRedis]:
    client = RememberingRedis.from_url(redis_url, decode_responses=True)
    assert isinstance(client, RememberingRedis)
    client.sent = []
    rt = Runtime(Settings(redis_url=redis_url, namespace=namespace, worker_id="w1"), client, root)
    pusher = SessionPusher(rt, client_for(redis_url, blocking=True), threading.Event(), {"permission"})
    return pusher, client


def _pending_reads(client: RememberingRedis, keys: Keys) -> int:
    return client.sent.count(("ZRANGE", keys.push_pending))


def test_pending_events_are_read_only_for_a_session_here(
    redis_url: str, namespace: str, rds: redis.Redis, keys: Keys, repo: Path, sockets: Path
) -> None:
    events = [Pending(f"{n}-0", "builder", f"builder asks ({n})") for n in range(1, 201)]
    push_store.queue(rds, keys, events)
    pusher, client = _pusher(redis_url, namespace, repo)
    for _ in range(20):
        pusher.push()
    assert _pending_reads(client, keys) == 0
    assert not pusher.waiting

    with RecordingInbox(sockets / "s.sock") as inbox:
        record_session(rds, keys, "s-1", inbox.path, inbox.token, repo)
        pusher.push()
        assert _pending_reads(client, keys) == 1
        # the inbox records a message when its connection ends, in its own thread
        retry_until(inbox.texts, 10.0, what="the pushed message")
        assert len(inbox.texts()) == 1  # the 200 events folded into one message
    assert len(push_store.pending(rds, keys)) == 200  # pushed, not acknowledged: still pending


def test_the_pending_set_keeps_the_newest_thousand(rds: redis.Redis, keys: Keys) -> None:
    """A person who never opens a session (nor runs `ib listen`) must not grow the set without end: past
    PENDING_KEPT the oldest go, their lines and all; the events themselves stay on the stream."""
    first = [Pending(f"{n}-0", "builder", f"builder asks ({n})") for n in range(1, PENDING_KEPT + 1)]
    push_store.queue(rds, keys, first)
    assert len(push_store.pending(rds, keys)) == PENDING_KEPT
    push_store.queue(rds, keys, [Pending(f"{n}-0", "builder", f"more ({n})") for n in range(5001, 5011)])
    kept = push_store.pending(rds, keys)
    assert len(kept) == PENDING_KEPT
    assert kept[0].event_id == "11-0" and kept[-1].event_id == "5010-0"  # the ten oldest went
    assert rds.hlen(keys.push_lines) == PENDING_KEPT
    assert not rds.hexists(keys.push_lines, "10-0") and rds.hexists(keys.push_lines, "11-0")
