"""Waiting claims (`claim_wait`), claiming one given task, and the done script through the light client."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest
import redis

from bus.errors import NotFound
from bus.tasks.task_lua import done_call
from bus.tasks.task_model import Task
from bus.tasks.task_store import TaskStore
from bus.tasks.task_wait import claim_wait
from bus.wire.address import Address
from bus.wire.keys import Keys
from bus.wire.resp import Connection, ServerError

P = "backend"


@pytest.fixture
def reader(redis_url: str) -> Iterator[redis.Redis]:
    client = redis.Redis.from_url(redis_url, decode_responses=True, socket_timeout=None)
    yield client
    client.close()


class Waiter(threading.Thread):
    """One `claim_wait` in a thread; `waiting` is set when its first claim found nothing."""

    def __init__(self, store: TaskStore, reader: redis.Redis, keys: Keys, agent: str, timeout: float) -> None:
        super().__init__(daemon=True)
        self.args = (store, reader, keys, P, agent, timeout)
        self.waiting = threading.Event()
        self.got: Task | None = None

    def run(self) -> None:
        self.got = claim_wait(*self.args, on_wait=self.waiting.set)


def test_a_waiter_is_woken_by_the_last_dependency_only(
    store: TaskStore, reader: redis.Redis, keys: Keys
) -> None:
    store.add("A", project=P, task_id="a")
    store.add("B", project=P, task_id="b")
    store.add("C", project=P, task_id="c", after=["a", "b"])
    store.claim(P, "x")
    store.claim(P, "x")
    waiter = Waiter(store, reader, keys, "w", 60)
    waiter.start()
    assert waiter.waiting.wait(10)
    store.add("Elsewhere", project="frontend", task_id="elsewhere")  # another project's task_ready
    store.done("a", "x")
    assert waiter.is_alive()
    store.done("b", "x")
    waiter.join(30)
    assert waiter.got is not None and (waiter.got.id, waiter.got.claimed_by) == ("c", "w")


def test_two_waiters_one_task(store: TaskStore, keys: Keys, redis_url: str) -> None:
    readers = [redis.Redis.from_url(redis_url, decode_responses=True) for _ in range(2)]
    waiters = [Waiter(store, r, keys, f"w{i}", 2) for i, r in enumerate(readers)]
    for w in waiters:
        w.start()
        assert w.waiting.wait(10)
    store.add("Only", project=P, task_id="only")
    for w in waiters:
        w.join(30)
    got = [w.got.id if w.got else None for w in waiters]
    assert sorted(map(str, got)) == ["None", "only"]
    for r in readers:
        r.close()


def test_no_wait_and_nothing_ready_is_none_at_once(store: TaskStore, reader: redis.Redis, keys: Keys) -> None:
    assert claim_wait(store, reader, keys, P, "w", 0) is None


def test_a_task_ready_before_the_wait_is_taken_without_blocking(
    store: TaskStore, reader: redis.Redis, keys: Keys
) -> None:
    store.add("Ready", project=P, task_id="ready")
    called: list[bool] = []
    got = claim_wait(store, reader, keys, P, "w", None, on_wait=lambda: called.append(True))
    assert got is not None and got.id == "ready" and called == []


def test_claim_task_takes_that_task_only_when_ready(store: TaskStore) -> None:
    store.add("High", project=P, task_id="high", priority=9)
    store.add("Low", project=P, task_id="low", priority=1)
    store.add("Later", project=P, task_id="later", after=["high"])
    got = store.claim_task("low", "a1")
    assert got is not None and (got.status, got.claimed_by, got.attempt) == ("claimed", "a1", 1)
    assert store.ready_ids(P) == ["high"]
    assert store.claim_task("low", "a2") is None  # claimed already
    assert store.claim_task("later", "a2") is None  # pending
    with pytest.raises(NotFound):
        store.claim_task("ghost", "a2")


def test_dependents_lists_who_waits(store: TaskStore) -> None:
    store.add("A", project=P, task_id="a")
    store.add("B", project=P, task_id="b", after=["a"])
    store.add("C", project="other", task_id="c", after=["a"])
    assert [t.id for t in store.dependents("a")] == ["b", "c"]
    assert store.dependents("c") == []


def test_the_done_script_through_the_light_client_is_the_stores_done(
    store: TaskStore, keys: Keys, redis_url: str
) -> None:
    store.add("A", project=P, task_id="a")
    store.add("B", project=P, task_id="b", after=["a"])
    store.claim(P, "agent-1")
    conn = Connection(Address.from_url(redis_url), 2.0)
    try:
        text, script_keys, args = done_call(keys, 10_000, "a", "agent-2", "not mine")
        with pytest.raises(ServerError, match="IB_CONFLICT task a is claimed by agent-1, not agent-2"):
            conn.call("EVAL", text, len(script_keys), *script_keys, *args)
        text, script_keys, args = done_call(keys, 10_000, "a", "agent-1", "finished")
        assert conn.call("EVAL", text, len(script_keys), *script_keys, *args) == [b"b"]
    finally:
        conn.close()
    a = store.get("a")
    assert (a.status, a.summary, [n.kind for n in a.notes]) == ("done", "finished", ["result"])
    assert store.get("b").status == "ready"
