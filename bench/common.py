"""Shared pieces of the benchmarks: percentiles, a namespace of their own, running `ib`."""

from __future__ import annotations

import os
import signal
import statistics
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import redis

IB = str(Path(sys.executable).with_name("ib"))
REDIS_URL = os.environ.get("IB_BENCH_REDIS_URL", "redis://127.0.0.1:6379/0")


def percentile(samples: Sequence[float], pct: float) -> float:
    ordered = sorted(samples)
    index = min(len(ordered) - 1, max(0, round(pct / 100 * (len(ordered) - 1))))
    return ordered[index]


def summary_ms(samples: Sequence[float]) -> str:
    ms = [s * 1000 for s in samples]
    return (
        f"n={len(ms)} p50={percentile(ms, 50):.2f} ms p90={percentile(ms, 90):.2f} ms "
        f"p99={percentile(ms, 99):.2f} ms mean={statistics.fmean(ms):.2f} ms"
    )


@contextmanager
def scratch_namespace() -> Iterator[str]:
    """A namespace of the benchmark's own on the shared Redis, deleted afterwards."""
    namespace = f"ibbench:{uuid.uuid4().hex[:8]}:"
    try:
        yield namespace
    finally:
        client = redis.Redis.from_url(REDIS_URL)
        keys = list(client.scan_iter(match=namespace + "*", count=1000))
        for i in range(0, len(keys), 500):
            client.delete(*keys[i : i + 500])
        client.close()


def ib_env(namespace: str, spool: str, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("IB_")}
    return {**env, "IB_REDIS_URL": REDIS_URL, "IB_NAMESPACE": namespace, "IB_SPOOL_DIR": spool, **extra}


def run(cmd: Sequence[str], env: dict[str, str], stdin: str = "") -> None:
    subprocess.run(cmd, env=env, input=stdin, capture_output=True, text=True, check=True)


def process_times(
    cmd: Sequence[str], env: dict[str, str], stdin: bytes = b"", runs: int = 40
) -> tuple[list[float], list[float]]:
    """Wall seconds and CPU seconds (user + system) of `runs` runs of one command."""
    walls: list[float] = []
    cpus: list[float] = []
    for _ in range(runs):
        start = time.perf_counter()
        proc = subprocess.Popen(
            cmd, env=env, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        assert proc.stdin is not None
        proc.stdin.write(stdin)
        proc.stdin.close()
        _pid, _status, usage = os.wait4(proc.pid, 0)
        walls.append(time.perf_counter() - start)
        cpus.append(usage.ru_utime + usage.ru_stime)
    return walls, cpus


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds a live process has used so far (from /proc)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / ticks


@contextmanager
def worker_running(env: dict[str, str], repo: Path) -> Iterator[subprocess.Popen[bytes]]:
    """`ib worker` for `repo` (its relay carries the hooks of agents whose box holds no bus address), up
    once its heartbeat is on the bus; stopped after."""
    from bus.wire.keys import Keys

    worker = subprocess.Popen(
        [IB, "worker"], cwd=repo, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    client = redis.Redis.from_url(REDIS_URL)
    heartbeat = Keys(env["IB_NAMESPACE"]).worker(env["IB_WORKER_ID"])
    try:
        limit = time.monotonic() + 30
        while not client.exists(heartbeat) and worker.poll() is None and time.monotonic() < limit:
            time.sleep(0.05)
        yield worker
    finally:
        worker.send_signal(signal.SIGTERM)
        worker.wait(30)
        client.close()


def pane_text(socket: str, target: str) -> str:
    """What a tmux pane shows now, as plain text (`capture-pane -p`); empty when it is gone."""
    shown = subprocess.run(
        ["tmux", "-L", socket, "capture-pane", "-p", "-t", target],
        capture_output=True,
        text=True,
        check=False,
    )
    return shown.stdout
