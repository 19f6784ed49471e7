"""What the whole fleet costs to read: a worker's read of its own agents per tick, `ib list --json`, and the
first frame of `ib watch`, at N agents on 10 workers.

    .venv/bin/python -m bench.fleet_bench                  # 1000 5000 10000 agents
    .venv/bin/python -m bench.fleet_bench 10000            # any counts

The agents are records made through the store in a scratch namespace of the Redis at IB_REDIS_URL
(default the local one), deleted afterwards key by key (never a flush). The watcher's read is measured
in-process, the old way (every agent of the bus, then this worker's: `AgentStore.all()` filtered) beside the
new one (`AgentStore.of_worker`), as CPU seconds of this process (median of 5). `ib list --json` and
`ib watch --plain` run as processes (`IB_WARM=0`, so the figure includes their start): CPU is the
process's user + system time, for `ib watch` read when its first frame is printed.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import redis

from bus.stores.agent_store import Agent, AgentStore
from bus.wire.keys import Keys
from worker.frontends.dashboard_render import render

WORKERS = 10
PROJECTS = 20
TICKS = 100  # clock ticks per second (/proc/<pid>/stat)
URL = os.environ.get("IB_REDIS_URL", "redis://127.0.0.1:6379/0")


def make_agents(store: AgentStore, count: int) -> None:
    now = time.time()
    for n in range(count):
        store.save(
            Agent(id=f"a{n}", goal=f"simulated agent {n}", project=f"p{n % PROJECTS}", session=f"ib-none-{n}",
                  worker=f"sw{n % WORKERS}", created_at=now - n, state=("running", "waiting")[n % 2],
                  state_at=now)
        )  # fmt: skip


def cpu_of(action: Callable[[], object], runs: int = 5) -> float:
    """Median CPU seconds of this process for one `action`."""
    spent = []
    for _ in range(runs):
        start = time.process_time()
        action()
        spent.append(time.process_time() - start)
    return statistics.median(spent)


def _env(namespace: str, folder: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("IB_")}
    env.update(IB_REDIS_URL=URL, IB_NAMESPACE=namespace, IB_WARM="0", IB_SPOOL_DIR=str(folder / "spool"))
    env.update(IB_TMUX_SOCKET=f"ib-fleet-none-{os.getpid()}", IB_WORKER_ID="bench")
    return env


def _ib() -> str:
    return str(Path(sys.executable).with_name("ib"))


def list_cpu(namespace: str, folder: Path) -> float:
    """CPU seconds of one `ib list --json`, start included."""
    before = os.times()
    done = subprocess.run(
        [_ib(), "list", "--json"], env=_env(namespace, folder), cwd=folder, capture_output=True, check=False
    )
    after = os.times()
    if done.returncode != 0:
        raise SystemExit(f"ib list failed: {done.stderr.decode()[-500:]}")
    return (after.children_user - before.children_user) + (after.children_system - before.children_system)


def watch_cpu(namespace: str, folder: Path) -> float:
    """CPU seconds of `ib watch --plain` until its first frame is printed, start included."""
    proc = subprocess.Popen(
        [_ib(), "watch", "--plain"], env=_env(namespace, folder), cwd=folder, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        if not proc.stdout.readline():
            raise SystemExit(
                f"ib watch printed nothing: {proc.stderr.read().decode()[-500:] if proc.stderr else ''}"
            )
        fields = Path(f"/proc/{proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / TICKS
    finally:
        proc.terminate()
        proc.wait(10)


def live_frame_cpu(namespace: str, folder: Path) -> float:
    """CPU seconds of one full-screen frame of the dashboard (read the bus, lay out 120 × 40), in-process."""
    from bus.connection.clients import client_for
    from bus.settings.settings import Settings
    from worker.frontends.dashboard import Dashboard
    from worker.runtime import Runtime

    rt = Runtime(Settings(redis_url=URL, namespace=namespace), client_for(URL), folder)
    board = Dashboard(rt, client_for(URL, blocking=True))
    board.start()
    try:
        return cpu_of(lambda: render(board.snapshot(120), 120, 40), runs=3)
    finally:
        board.stop()


def scrub(client: redis.Redis, namespace: str) -> None:
    batch = list(client.scan_iter(match=namespace + "*", count=1000))
    for i in range(0, len(batch), 500):
        client.delete(*batch[i : i + 500])


def measure(count: int, folder: Path) -> None:
    client = redis.Redis.from_url(URL, decode_responses=True)
    namespace = f"ib-bench-fleet-{uuid.uuid4().hex[:8]}:"
    keys = Keys(namespace)
    store = AgentStore(client, keys)
    try:
        make_agents(store, count)
        old = cpu_of(lambda: [a for a in store.all() if a.worker == "sw0"])
        new = cpu_of(lambda: store.of_worker("sw0"))
        print(f"== {count} agents on {WORKERS} workers ({count // WORKERS} each)")
        print(f"  a worker's read of its agents per tick: all() then its own {old * 1000:7.1f} ms CPU"
              f" | of_worker {new * 1000:6.1f} ms CPU ({old / max(new, 1e-9):.0f}x less)")  # fmt: skip
        print(f"  ib list --json (start included):       {list_cpu(namespace, folder):5.2f} s CPU")
        print(f"  ib watch --plain, first frame:         {watch_cpu(namespace, folder):5.2f} s CPU")
        print(
            f"  ib watch, one full-screen frame:       {live_frame_cpu(namespace, folder):5.2f} s CPU",
            "(in-process)",
        )
    finally:
        scrub(client, namespace)


def main() -> None:
    import tempfile

    counts = [int(a) for a in sys.argv[1:]] or [1000, 5000, 10000]
    print(f"({os.cpu_count()} CPUs; load average {os.getloadavg()[0]:.1f}; Redis at {URL})")
    with tempfile.TemporaryDirectory(prefix="ib-fleet-") as folder:
        subprocess.run(["git", "init", "-q", folder], check=True)
        for count in counts:
            measure(count, Path(folder))


if __name__ == "__main__":
    main()
