"""Many claimer processes racing over one ready queue: every task is claimed exactly once."""

from __future__ import annotations

import multiprocessing
from collections import Counter
from multiprocessing.synchronize import Barrier
from typing import cast

import redis

from bus.events.envelope import EVENT_FIELD, decode
from bus.tasks.task_store import TaskStore
from bus.wire.keys import Keys

CLAIMERS = 16
TASKS = 2_000
PROJECT = "race"
Entries = list[tuple[str, dict[str, str]]]


def claim_all(
    redis_url: str, namespace: str, agent: str, start: Barrier, results: multiprocessing.Queue[object]
) -> None:
    """One claimer process: wait for the others, then claim until the queue is empty."""
    client = redis.Redis.from_url(redis_url, decode_responses=True)
    store = TaskStore(client, Keys(namespace), events_maxlen=100_000)
    start.wait(timeout=60)
    claimed = []
    while (task := store.claim(PROJECT, agent)) is not None:
        assert task.claimed_by == agent and task.status == "claimed"
        claimed.append(task.id)
    client.close()
    results.put((agent, claimed))


def test_sixteen_processes_claim_two_thousand_tasks_exactly_once(
    rds: redis.Redis, keys: Keys, redis_url: str, namespace: str
) -> None:
    store = TaskStore(rds, keys, events_maxlen=100_000)
    for i in range(TASKS):
        store.add(f"task {i}", project=PROJECT, task_id=f"t{i}", priority=i % 11)
    expected = {f"t{i}" for i in range(TASKS)}
    mark = cast(Entries, rds.xrevrange(keys.events, count=1))[0][0]

    ctx = multiprocessing.get_context("spawn")
    start = ctx.Barrier(CLAIMERS)
    results: multiprocessing.Queue[object] = ctx.Queue()
    agents = [f"agent-{n}" for n in range(CLAIMERS)]
    procs = [ctx.Process(target=claim_all, args=(redis_url, namespace, a, start, results)) for a in agents]
    for proc in procs:
        proc.start()
    by_agent = dict(cast(tuple[str, list[str]], results.get(timeout=90)) for _ in procs)
    for proc in procs:
        proc.join(timeout=30)
        assert proc.exitcode == 0

    # From the claimers' own results: no task twice, none missed.
    all_claims = [task_id for claimed in by_agent.values() for task_id in claimed]
    assert Counter(all_claims).most_common(1)[0][1] == 1
    assert set(all_claims) == expected
    assert len([claimed for claimed in by_agent.values() if claimed]) > 1

    # From the bus: one task_claimed per task, naming the agent that got it.
    claimed_events = [
        decode(i, f[EVENT_FIELD]) for i, f in cast(Entries, rds.xrange(keys.events, f"({mark}", "+"))
    ]
    assert {e["type"] for e in claimed_events} == {"task_claimed"}
    owner = {task_id: agent for agent, claimed in by_agent.items() for task_id in claimed}
    assert len(claimed_events) == TASKS
    assert {e["task"]: e["agent"] for e in claimed_events} == owner

    # And from the store.
    assert store.counts(PROJECT)["claimed"] == TASKS and store.ready_ids(PROJECT) == []
    assert all(t.claimed_by == owner[t.id] and t.attempt == 1 for t in store.list(PROJECT))
