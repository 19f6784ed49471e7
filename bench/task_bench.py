"""Benchmarks of the task queue, each figure printed beside its baseline in the same run.

    .venv/bin/python -m bench.task_bench            # both
    .venv/bin/python -m bench.task_bench claims     # one of: claims, wakeup

1. Claims per second by 1 / 4 / 16 claimer processes emptying 10,000 ready tasks, and how many tasks were
   handed out twice: ittybus (the claim Lua script, with and without reading the task back) beside
   Minuano's claim, one PostgreSQL statement with FOR UPDATE SKIP LOCKED, on a scratch database.
2. `claim --wait` wake-up: from the call that finishes a task's last dependency to the waiting claimer
   holding the task: `claim_wait` in a thread of this process (≥ 200 rounds), and real
   `ib task claim --wait` processes (a smaller sample; includes printing the task on stdout).
"""

from __future__ import annotations

import io
import multiprocessing as mp
import os
import random
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from multiprocessing.synchronize import Barrier

import psycopg
import redis

from bench.common import IB, REDIS_URL, ib_env, percentile, scratch_namespace
from bus.tasks.task_lua import fixed_args, fixed_keys, script_text
from bus.tasks.task_store import TaskStore
from bus.tasks.task_wait import claim_wait, waiter_name
from bus.wire.keys import Keys

TASKS = int(os.environ.get("IB_BENCH_TASKS", "10000"))
CLAIMERS = tuple(int(n) for n in os.environ.get("IB_BENCH_CLAIMERS", "1,4,16,64").split(","))
WAKE_ROUNDS = int(os.environ.get("IB_BENCH_WAKE_ROUNDS", "300"))
PROCESS_ROUNDS = int(os.environ.get("IB_BENCH_PROCESS_ROUNDS", "25"))
PG_URL = os.environ.get("IB_BENCH_PG_URL", "postgresql://postgres@127.0.0.1:5432")
PROJECT = "bench"
MAXLEN = 1_000_000  # keep every event of the run: trimming is not what is measured

# (wall seconds, ids claimed per claimer)
Outcome = tuple[float, list[list[str]]]


def priorities() -> list[int]:
    rng = random.Random(7)
    return [rng.randint(0, 10) for _ in range(TASKS)]


# claims: ittybus


def fill_redis(ns: str) -> None:
    store = TaskStore(redis.Redis.from_url(REDIS_URL, decode_responses=True), Keys(ns), MAXLEN)
    for i, priority in enumerate(priorities()):
        store.add(f"Task {i}", project=PROJECT, task_id=f"t{i}", priority=priority)


def redis_claimer(ns: str, agent: str, read_back: bool, barrier: Barrier, out: mp.Queue[object]) -> None:
    client = redis.Redis.from_url(REDIS_URL, decode_responses=True)
    keys = Keys(ns)
    store = TaskStore(client, keys, MAXLEN)
    script = client.register_script(script_text("claim"))
    script_keys = [*fixed_keys(keys), keys.ready(PROJECT)]
    args = [*fixed_args(keys, MAXLEN), agent]
    got: list[str] = []
    barrier.wait()
    start = time.perf_counter()
    while True:
        if read_back:
            task = store.claim(PROJECT, agent)
            claimed = task.id if task else None
        else:
            reply = script(keys=script_keys, args=args)  # the task comes back too; only its id is read
            claimed = str(reply[0]) if reply else None
        if claimed is None:
            break
        got.append(claimed)
    out.put((start, time.perf_counter(), got))


# claims: PostgreSQL, Minuano's way

SCHEMA = """
CREATE TABLE tasks (
    id text PRIMARY KEY,
    project text NOT NULL,
    title text NOT NULL,
    body text NOT NULL DEFAULT '',
    status text NOT NULL DEFAULT 'pending',
    priority int NOT NULL DEFAULT 5,
    attempt int NOT NULL DEFAULT 0,
    max_attempts int NOT NULL DEFAULT 3,
    claimed_by text,
    claimed_at timestamptz,
    created_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE TABLE task_deps (
    task_id text NOT NULL REFERENCES tasks (id),
    depends_on text NOT NULL REFERENCES tasks (id),
    PRIMARY KEY (task_id, depends_on)
);
CREATE INDEX tasks_ready ON tasks (project, status, priority DESC, created_at);
"""
CLAIM = (
    "UPDATE tasks SET status='claimed', claimed_by=%s WHERE id = ("
    "SELECT id FROM tasks WHERE project=%s AND status='ready' "
    "ORDER BY priority DESC, created_at LIMIT 1 FOR UPDATE SKIP LOCKED) RETURNING *"
)


@contextmanager
def scratch_database() -> Iterator[str]:
    """A database of the benchmark's own, dropped afterwards; yields its URL."""
    name = f"ib_bench_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(f"{PG_URL}/postgres", autocommit=True) as admin:
        admin.execute(f"CREATE DATABASE {name}")
    try:
        url = f"{PG_URL}/{name}"
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(SCHEMA)
        yield url
    finally:
        with psycopg.connect(f"{PG_URL}/postgres", autocommit=True) as admin:
            admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def fill_postgres(url: str) -> None:
    rows = io.StringIO()
    base = time.time()
    for i, priority in enumerate(priorities()):
        created = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(base)) + f".{i:06d}+00"
        rows.write(f"t{i}\t{PROJECT}\tTask {i}\tready\t{priority}\t{created}\n")
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("TRUNCATE task_deps, tasks")
        with conn.cursor().copy(
            "COPY tasks (id, project, title, status, priority, created_at) FROM STDIN"
        ) as copy:
            copy.write(rows.getvalue())
        conn.execute("VACUUM ANALYZE tasks")


def pg_claimer(url: str, agent: str, durable: bool, barrier: Barrier, out: mp.Queue[object]) -> None:
    got: list[str] = []
    with psycopg.connect(url, autocommit=True) as conn:
        if not durable:  # no WAL flush per commit: closer to a Redis that does not fsync each write
            conn.execute("SET synchronous_commit = off")
        barrier.wait()
        start = time.perf_counter()
        while True:
            row = conn.execute(CLAIM, (agent, PROJECT), prepare=True).fetchone()
            if row is None:
                break
            got.append(str(row[0]))
        out.put((start, time.perf_counter(), got))


def describe(outcome: Outcome) -> str:
    wall, per_claimer = outcome
    claimed = [i for ids in per_claimer for i in ids]
    doubles = len(claimed) - len(set(claimed))
    missing = TASKS - len(set(claimed))
    extra = f", {missing} never claimed" if missing else ""
    return f"{len(claimed) / wall:>7,.0f}/s, {doubles} double{extra}"


def bench_claims() -> None:
    print(f"== (a) claims/s: N claimer processes empty {TASKS:,} ready tasks ({os.cpu_count()} CPUs)")
    rows: dict[int, list[str]] = {n: [] for n in CLAIMERS}
    for read_back in (True, False):
        for n in CLAIMERS:
            with scratch_namespace() as ns:
                fill_redis(ns)
                rows[n].append(describe(race_redis(n, ns, read_back)))
    with scratch_database() as url:
        for durable in (True, False):
            for n in CLAIMERS:
                fill_postgres(url)
                rows[n].append(describe(race_pg(n, url, durable)))
    headers = (
        "ittybus TaskStore.claim: the claim script returns the task (hash, deps, notes), one round trip",
        "ittybus claim script alone (the same reply, not decoded into a Task)",
        "PostgreSQL UPDATE … FOR UPDATE SKIP LOCKED RETURNING * (the row; synchronous_commit on: default)",
        "the same statement, synchronous_commit off",
    )
    redis_aof = redis.Redis.from_url(REDIS_URL).config_get("appendonly").get("appendonly", "?")
    for i, header in enumerate(headers):
        print(f"  [{i + 1}] {header}")
    print(f"  (this Redis: appendonly {redis_aof}; every claim also appends its task_claimed event)")
    print(f"  {'claimers':>8}  " + "  ".join(f"{'[' + str(i + 1) + ']':<28}" for i in range(len(headers))))
    for n in CLAIMERS:
        print(f"  {n:>8}  " + "  ".join(f"{cell:<28}" for cell in rows[n]) + f"  [1]/[3] {_ratio(rows[n])}")


def _ratio(cells: list[str]) -> str:
    """How many times PostgreSQL's rate (synchronous_commit on) the TaskStore claim reaches."""
    ours, theirs = (float(cells[i].split("/s")[0].replace(",", "")) for i in (0, 2))
    return f"{ours / theirs:.1f}x" if theirs else "-"


def race_redis(claimers: int, ns: str, read_back: bool) -> Outcome:
    ctx = mp.get_context("fork")
    barrier = ctx.Barrier(claimers)
    out: mp.Queue[object] = ctx.Queue()
    procs = [
        ctx.Process(target=redis_claimer, args=(ns, f"c{i}", read_back, barrier, out))
        for i in range(claimers)
    ]
    return collect(procs, out)


def race_pg(claimers: int, url: str, durable: bool) -> Outcome:
    ctx = mp.get_context("fork")
    barrier = ctx.Barrier(claimers)
    out: mp.Queue[object] = ctx.Queue()
    procs = [
        ctx.Process(target=pg_claimer, args=(url, f"c{i}", durable, barrier, out)) for i in range(claimers)
    ]
    return collect(procs, out)


def collect(procs: Sequence[mp.process.BaseProcess], out: mp.Queue[object]) -> Outcome:
    for p in procs:
        p.start()
    results: list[tuple[float, float, list[str]]] = [out.get(timeout=300) for _ in procs]  # type: ignore[misc]
    for p in procs:
        p.join()
    return max(r[1] for r in results) - min(r[0] for r in results), [r[2] for r in results]


# wake-up


def blocked(client: redis.Redis, name: str) -> bool:
    """Whether the connection named `name` is blocked in XREAD right now."""
    for info in client.client_list():
        if info.get("name") == name and info.get("cmd") == "xread" and "b" in info.get("flags", ""):
            return True
    return False


def until(check: Callable[[], bool], what: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not check():  # the benchmark looks from outside; the waiter itself never polls
        if time.monotonic() > deadline:
            raise RuntimeError(f"timed out waiting for {what}")
        time.sleep(0.0005)


def hold(store: TaskStore, reader: redis.Redis, keys: Keys, expected: str, held: list[float]) -> None:
    """The waiter: claim_wait, then the moment it holds the task."""
    task = claim_wait(store, reader, keys, PROJECT, "waiter", 30)
    held.append(time.perf_counter())
    assert task is not None and task.id == expected, task


def wake_in_process(rounds: int) -> list[float]:
    samples: list[float] = []
    with scratch_namespace() as ns:
        keys = Keys(ns)
        client = redis.Redis.from_url(REDIS_URL, decode_responses=True)
        reader = redis.Redis.from_url(REDIS_URL, decode_responses=True, socket_timeout=None)
        store = TaskStore(client, keys, MAXLEN)
        name = waiter_name(PROJECT, "waiter")
        for i in range(rounds):
            store.add(f"Dependency {i}", project=PROJECT, task_id=f"d{i}")
            store.add(f"Task {i}", project=PROJECT, task_id=f"t{i}", after=[f"d{i}"])
            store.claim(PROJECT, "builder")
            held: list[float] = []
            thread = threading.Thread(target=hold, args=(store, reader, keys, f"t{i}", held))
            thread.start()
            until(lambda: blocked(client, name), "the waiter to block")
            start = time.perf_counter()
            store.done(f"d{i}", "builder")
            thread.join()
            samples.append(held[0] - start)
        client.close()
        reader.close()
    return samples


def wake_processes(rounds: int) -> list[float]:
    samples: list[float] = []
    with scratch_namespace() as ns, tempfile.TemporaryDirectory() as tmp:
        subprocess.run(["git", "init", "-q", tmp], check=True)
        env = ib_env(ns, os.path.join(tmp, ".spool"))
        keys = Keys(ns)
        client = redis.Redis.from_url(REDIS_URL, decode_responses=True)
        store = TaskStore(client, keys, MAXLEN)
        for i in range(rounds):
            agent = f"w{i}"
            store.add(f"Dependency {i}", project=PROJECT, task_id=f"d{i}")
            store.add(f"Task {i}", project=PROJECT, task_id=f"t{i}", after=[f"d{i}"])
            store.claim(PROJECT, "builder")
            proc = subprocess.Popen(
                [
                    IB,
                    "task",
                    "claim",
                    "--wait",
                    "--timeout",
                    "60",
                    "--project",
                    PROJECT,
                    "--as",
                    agent,
                    "--json",
                ],
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                text=True,
                env=env,
                cwd=tmp,
            )
            until(lambda: blocked(client, waiter_name(PROJECT, agent)), "ib task claim --wait to block")  # noqa: B023
            start = time.perf_counter()
            store.done(f"d{i}", "builder")
            assert proc.stdout is not None
            line = proc.stdout.readline()
            samples.append(time.perf_counter() - start)
            assert f'"id": "t{i}"' in line, line
            proc.wait()
        client.close()
    return samples


def bench_wakeup() -> None:
    print("== (b) claim --wait wake-up: last dependency's done called → waiting claimer holds the task")
    inproc = wake_in_process(WAKE_ROUNDS)
    procs = wake_processes(PROCESS_ROUNDS)
    for label, samples in (
        ("claim_wait in a thread of this process (the waiter's logic)", inproc),
        ("`ib task claim --wait` processes (to the task on stdout)", procs),
    ):
        ms = [s * 1000 for s in samples]
        print(
            f"  {label:<62} n={len(ms):<4} p50={percentile(ms, 50):6.2f} ms  p90={percentile(ms, 90):6.2f} ms"
            f"  p99={percentile(ms, 99):6.2f} ms  max={max(ms):6.2f} ms"
        )


def main(argv: list[str]) -> None:
    wanted = argv or ["claims", "wakeup"]
    started = time.perf_counter()
    for name in wanted:
        {"claims": bench_claims, "wakeup": bench_wakeup}[name]()
    print(f"(run took {time.perf_counter() - started:.0f} s; Redis {REDIS_URL}, PostgreSQL {PG_URL})")


if __name__ == "__main__":
    main(sys.argv[1:])
