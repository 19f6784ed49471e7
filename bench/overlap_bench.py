"""What holding overlapping tasks (IB_OVERLAP=hold, bus/tasks/task_holds.py) adds to a claim.

    .venv/bin/python -m bench.overlap_bench      # IB_BENCH_READY=50, IB_BENCH_CLAIMED=10, IB_BENCH_ROUNDS=100

A project with 1,000 finished tasks, IB_BENCH_CLAIMED claimed ones and IB_BENCH_READY ready ones, each
touching two files, half of the ready ones overlapping a claimed task. Each round claims the next task and
gives it back (the release is not timed). Baseline, in the same run: the bare claim script (`ignore`).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable

import redis

from bench.common import REDIS_URL, scratch_namespace, summary_ms
from bus.tasks.merges import MergeStore
from bus.tasks.task_holds import OverlapClaims
from bus.tasks.task_model import Task
from bus.tasks.task_store import TaskStore
from bus.wire.keys import Keys

READY = int(os.environ.get("IB_BENCH_READY", "50"))
CLAIMED = int(os.environ.get("IB_BENCH_CLAIMED", "10"))
ROUNDS = int(os.environ.get("IB_BENCH_ROUNDS", "100"))
DONE = 1000
P = "bench"


def fill(tasks: TaskStore) -> None:
    for n in range(DONE):
        tasks.add(f"old {n}", project=P, task_id=f"old-{n}", touches=[f"old/{n}.py"])
        tasks.claim_task(f"old-{n}", "past")
        tasks.done(f"old-{n}", "past")
    for n in range(CLAIMED):
        tasks.add(f"busy {n}", project=P, task_id=f"busy-{n}", priority=9, touches=[f"src/m{n}.py", "docs/"])
        tasks.claim_task(f"busy-{n}", f"agent-{n}")
    for n in range(READY):
        touched = f"src/m{n % CLAIMED}.py" if n % 2 == 0 else f"lib/l{n}.py"
        tasks.add(f"next {n}", project=P, task_id=f"next-{n}", touches=[touched, f"tests/t{n}.py"])


def timed(claim: Callable[[], Task | None], tasks: TaskStore) -> list[float]:
    samples = []
    for _ in range(ROUNDS):
        start = time.perf_counter()
        task = claim()
        samples.append(time.perf_counter() - start)
        assert task is not None
        tasks.release(task.id)
    return samples


def main() -> None:
    with scratch_namespace() as namespace:
        client = redis.Redis.from_url(REDIS_URL, decode_responses=True)
        keys = Keys(namespace)
        tasks = TaskStore(client, keys, events_maxlen=100_000)
        merges = MergeStore(client, keys, 100_000)
        fill(tasks)
        hold = OverlapClaims(tasks, merges, "hold")
        ignore = OverlapClaims(tasks, merges, "ignore")
        print(
            f"{DONE} done, {CLAIMED} claimed, {READY} ready ({len(hold.holds(P))} held), {ROUNDS} claims each"
        )
        baseline = summary_ms(timed(lambda: ignore.claim(P, "b"), tasks))
        held = summary_ms(timed(lambda: hold.claim(P, "b"), tasks))
        print(f"  claim, IB_OVERLAP=ignore (baseline, the claim script alone): {baseline}")
        print(f"  claim, IB_OVERLAP=hold:                                      {held}")
        client.close()


if __name__ == "__main__":
    main()
