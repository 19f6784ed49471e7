"""Benchmarks of the dashboard (`ib watch`).

    .venv/bin/python -m bench.watch_bench            # both
    .venv/bin/python -m bench.watch_bench latency    # one of: latency, idle

1. Event → screen: an event published on the bus until the dashboard's update loop (headless, the plain
   renderer) has written a snapshot showing it; with a populated namespace (agents, tasks, a question).
   Also the cost of one frame: reading the snapshot from the bus, rendering it at 80×24 with rich.
2. Idle cost: CPU seconds per minute of a real `ib watch` in an 80×24 tmux pane with nothing happening,
   read from /proc/<pid>/stat, beside the same for `ib watch` printing plain snapshots to a pipe.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

import redis
from rich.console import Console

from bench.common import IB, REDIS_URL, ib_env, scratch_namespace, summary_ms
from bus.connection.clients import client_for
from bus.events.envelope import make_event
from bus.events.streams import publish
from bus.inbox.questions import QuestionStore
from bus.settings.settings import load_settings
from bus.stores.agent_store import Agent, AgentStore
from bus.tasks.task_store import TaskStore
from bus.wire.keys import Keys
from worker.frontends.dashboard import Dashboard
from worker.frontends.dashboard_render import render
from worker.runtime import Runtime

EVENTS = int(os.environ.get("IB_BENCH_EVENTS", "300"))
IDLE_SECONDS = float(os.environ.get("IB_BENCH_IDLE_SECONDS", "30"))
AGENTS, TASKS = 10, 40


def populate(client: redis.Redis, keys: Keys) -> None:
    """A namespace that looks like a working day: agents (some with workers), tasks, a question."""
    agents = AgentStore(client, keys)
    now = time.time()
    for i in range(AGENTS):
        manager = "agent-00" if i and i % 3 == 0 else ""
        agents.save(
            Agent(id=f"agent-{i:02d}", goal=f"goal {i}", manager=manager, project="bench", created_at=now - i)
        )
    tasks = TaskStore(client, keys, 100_000)
    previous: list[str] = []
    for i in range(TASKS):
        after = previous[-1:] if i % 4 else []
        previous.append(tasks.add(f"task {i}", project="bench", priority=i % 10, after=after).id)
    for i in range(3):
        tasks.claim("bench", f"agent-{i:02d}")
    QuestionStore(client, keys).ask("agent-01", "Postgres or SQLite?", "bench")


def repo(folder: str) -> Path:
    path = Path(folder) / "bench-repo"
    path.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main", str(path)], check=True)
    return path


class Screen(io.StringIO):
    """The plain renderer's output: notes when a snapshot containing the awaited text is written."""

    def __init__(self) -> None:
        super().__init__()
        self.awaited = ""
        self.seen = threading.Event()
        self.at = 0.0

    def write(self, text: str) -> int:
        if self.awaited and self.awaited in text:
            self.at = time.perf_counter()
            self.seen.set()
        return len(text)


def bench_latency() -> None:
    with scratch_namespace() as ns, tempfile.TemporaryDirectory() as tmp:
        root = repo(tmp)
        settings = load_settings(str(root), redis_url=REDIS_URL, namespace=ns)
        client = client_for(REDIS_URL)
        keys = Keys(ns)
        populate(client, keys)
        rt = Runtime(settings, client, root)
        dashboard = Dashboard(rt, client_for(REDIS_URL, blocking=True), "bench")
        dashboard.start()
        screen = Screen()
        threading.Thread(target=dashboard.run_plain, args=(screen,), daemon=True).start()
        samples = []
        for i in range(EVENTS):
            marker = f"bench-{i}-{uuid.uuid4().hex[:6]}"
            screen.seen.clear()
            screen.awaited = marker
            sent = time.perf_counter()
            publish(client, keys, make_event("message", marker, project="bench"), maxlen=100_000)
            if not screen.seen.wait(5.0):
                raise SystemExit(f"the dashboard never showed event {i}")
            samples.append(screen.at - sent)
            time.sleep(0.002 + (i % 7) * 0.003)  # events at uneven moments, not in lockstep with a tick
        dashboard.stop()
        reads, renders = frame_cost(dashboard)
    print(f"event → dashboard (headless, plain; {AGENTS} agents, {TASKS} tasks): {summary_ms(samples)}")
    print(f"one frame: read from the bus {summary_ms(reads)}")
    print(f"one frame: render 80×24 with rich {summary_ms(renders)}")


def frame_cost(dashboard: Dashboard, frames: int = 200) -> tuple[list[float], list[float]]:
    reads, renders = [], []
    console = Console(width=80, height=24, file=io.StringIO(), color_system="truecolor", force_terminal=True)
    for _ in range(frames):
        t0 = time.perf_counter()
        snap = dashboard.snapshot()
        t1 = time.perf_counter()
        console.print(render(snap, 80, 24))
        t2 = time.perf_counter()
        reads.append(t1 - t0)
        renders.append(t2 - t1)
    return reads, renders


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    utime, stime = int(fields[11]), int(fields[12])
    return (utime + stime) / os.sysconf("SC_CLK_TCK")


def idle_in_tmux(env: dict[str, str], root: Path) -> float:
    socket = f"ibbench-{uuid.uuid4().hex[:8]}"
    tmux = ["tmux", "-L", socket, "-f", "/dev/null"]
    subprocess.run(
        [*tmux, "new-session", "-d", "-x", "80", "-y", "24", "-s", "w", "-c", str(root), f"exec {IB} watch"],
        env=env,
        check=True,
    )
    try:
        pid = int(
            subprocess.run(
                [*tmux, "display", "-p", "-t", "w", "#{pane_pid}"],
                env=env,
                capture_output=True,
                text=True,
                check=True,
            ).stdout
        )
        return idle_cpu(pid)
    finally:
        subprocess.run([*tmux, "kill-server"], env=env, capture_output=True, check=False)


def idle_in_pipe(env: dict[str, str], root: Path) -> float:
    proc = subprocess.Popen(
        [IB, "watch"], env=env, cwd=root, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        return idle_cpu(proc.pid)
    finally:
        proc.terminate()
        proc.wait()


def idle_cpu(pid: int) -> float:
    """CPU seconds per minute over IDLE_SECONDS, after a few seconds to start up."""
    time.sleep(3.0)
    before, start = cpu_seconds(pid), time.monotonic()
    time.sleep(IDLE_SECONDS)
    used, took = cpu_seconds(pid) - before, time.monotonic() - start
    return used / took * 60


def bench_idle() -> None:
    with scratch_namespace() as ns, tempfile.TemporaryDirectory() as tmp:
        root = repo(tmp)
        populate(client_for(REDIS_URL), Keys(ns))
        env = ib_env(ns, os.path.join(tmp, "spool"), IB_TMUX_SOCKET=f"ibbench-agents-{uuid.uuid4().hex[:6]}")
        live = idle_in_tmux(env, root)
        plain = idle_in_pipe(env, root)
    print(f"idle `ib watch`, {IDLE_SECONDS:.0f} s each, {AGENTS} agents, {TASKS} tasks:")
    print(f"  live screen in an 80×24 tmux pane: {live:.2f} CPU s/min ({live / 60 * 100:.2f} % of a core)")
    print(f"  plain snapshots to a pipe:         {plain:.2f} CPU s/min ({plain / 60 * 100:.2f} % of a core)")


def main() -> None:
    which = sys.argv[1:] or ["latency", "idle"]
    print(f"machine: {os.cpu_count()} cores; redis {redis.Redis.from_url(REDIS_URL).info()['redis_version']}")
    for name in which:
        {"latency": bench_latency, "idle": bench_idle}[name]()


if __name__ == "__main__":
    main()
