"""Scale: W workers × A agents on one Redis, every agent changing state every few seconds.

    .venv/bin/python -m bench.scale_bench                 # 1 × 100, then 10 × 100
    .venv/bin/python -m bench.scale_bench 4x100 10x100    # any WxA

What is real and what is simulated. Each worker is a process running the real `WorkerService` (its
heartbeat, the sweep for dead workers, its inbox — one XREADGROUP on its command stream and on every
event —, the merge queue and the /auto hooks, the transcript tailer). Only the tmux panes are
simulated: the pane watcher's tick is replaced by a schedule that, for every agent due, records a new
state through the real `PaneWatcher.record` (the same writes and `state` event the watcher makes when
a pane changes). Every agent changes state every 2–4 s (uniform), so 1,000 agents make about 333
events a second. One consumer process reads the events stream through a consumer group (as `ib listen`
and `ib events --group` do) and notes each event's age; the real bot (`python -m bot`) runs against
the fake Bot API (limits off, its own pacing ×1000), routing every event, while probe events
(`task_added` in a bound project topic, 4 a second) measure event → sendMessage.

Redis is a redis-server of the benchmark's own (no persistence), so its CPU is ours alone. CPU % is
CPU time over wall time in the measured window (100 % = one core); memory is the resident set.
"""

from __future__ import annotations

import json
import multiprocessing as mp
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import redis

from bench.bot_bench import TimedFake
from bench.common import percentile
from bus.connection.clients import client_for
from bus.events.envelope import make_event
from bus.events.streams import publish
from bus.settings.settings import Settings
from bus.stores.agent_store import Agent, AgentStore
from bus.wire.keys import Keys
from tests.streams import stream_entries
from worker.runtime import Runtime
from worker.service.pane_watch import PaneWatcher
from worker.service.process import WorkerService

WARMUP = float(os.environ.get("IB_BENCH_WARMUP", "8"))
WINDOW = float(os.environ.get("IB_BENCH_WINDOW", "20"))
STATES = ("running", "waiting", "complete", "compacting")
PROBES_PER_SECOND = 4
PROBE = re.compile(r"\+ probe-(\d+) added")
NAMESPACE = "ib:"
TICKS = 100  # clock ticks per second (/proc/<pid>/stat)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS  # utime, stime


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


@dataclass
class SimulatedPanes:
    """The pane watcher's tick with panes simulated: due agents get a new state via the real `record`."""

    watcher: PaneWatcher
    rng: random.Random
    due: dict[str, float] = field(default_factory=dict)

    def tick(self) -> None:
        rt = self.watcher.rt
        agents = [a for a in rt.agents.all() if a.worker == rt.worker_id]  # as PaneWatcher.tick reads them
        now = time.monotonic()
        for agent in agents:
            when = self.due.setdefault(agent.id, now + self.rng.uniform(0, 3))
            if now >= when:
                self.watcher.record(agent, self.rng.choice([s for s in STATES if s != agent.state]))
                self.due[agent.id] = now + self.rng.uniform(2, 4)


def run_worker(url: str, worker_id: str, agents: int, folder: str) -> None:
    settings = Settings(
        redis_url=url,
        namespace=NAMESPACE,
        worker_id=worker_id,
        tmux_socket=f"ib-scale-none-{os.getpid()}",  # no server: no panes, as simulated
        pane_interval=0.5,
        status_node_auto=False,
        spool_dir=Path(folder) / "spool",
    )
    rt = Runtime(settings, client_for(url), Path(folder))
    store = AgentStore(rt.client, rt.keys)
    now = time.time()
    for n in range(agents):
        store.save(
            Agent(id=f"{worker_id}-a{n}", goal="simulated", project="sim", session="none", worker=worker_id,
                  created_at=now, state="waiting", state_at=now)
        )  # fmt: skip
    service = WorkerService(rt, client_for(url, blocking=True))
    service.watcher.tick = SimulatedPanes(service.watcher, random.Random(worker_id)).tick  # type: ignore[method-assign]
    service.stop_on_signals()
    service.run()


def run_consumer(url: str, out: mp.Queue[object], stop_at: float, start_at: float) -> None:
    """A consumer group reader, as `ib events --group`: the age of each event when it is read."""
    client = client_for(url, blocking=True)
    keys = Keys(NAMESPACE)
    client.xgroup_create(keys.events, "bench", id="$", mkstream=True)
    ages: list[float] = []
    while time.time() < stop_at:
        reply = client.xreadgroup("bench", "c1", {keys.events: ">"}, count=1000, block=200)
        now_ms = time.time() * 1000
        for _stream, entries in cast(list[tuple[str, list[tuple[str, dict[str, str]]]]], reply or []):
            for entry_id, fields in entries:
                json.loads(fields["e"])  # a consumer decodes what it reads
                if now_ms / 1000 >= start_at:
                    ages.append(now_ms - int(entry_id.split("-")[0]))
            client.xack(keys.events, "bench", *[i for i, _f in entries])
    out.put(ages)


@dataclass
class Run:
    workers: int
    agents: int
    events_per_s: float = 0.0
    consumer: list[float] = field(default_factory=list)
    bot: list[float] = field(default_factory=list)
    redis_cpu: float = 0.0
    worker_cpu: list[float] = field(default_factory=list)
    worker_mb: list[float] = field(default_factory=list)
    bot_cpu: float = 0.0


def scenario(workers: int, agents: int) -> Run:
    folder = tempfile.mkdtemp(prefix="ib-scale-")
    subprocess.run(["git", "init", "-q", folder], check=True)  # the workers' repository (no agents use it)
    port = free_port()
    server = subprocess.Popen(
        ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
         "--dir", folder],
        stdout=subprocess.DEVNULL,
    )  # fmt: skip
    url = f"redis://127.0.0.1:{port}/0"
    fake = TimedFake(time_scale=1000.0, limits=False)
    procs: list[mp.process.BaseProcess] = []
    bot: subprocess.Popen[bytes] | None = None
    try:
        client = redis.Redis.from_url(url, decode_responses=True)
        _wait(lambda: _pings(client), "our Redis")
        keys = Keys(NAMESPACE)
        fake.start()
        client.hset(keys.topics("project"), "bench", str(fake.create_topic("bench")))
        bot = _start_bot(url, fake, folder)
        ctx = mp.get_context("fork")
        for w in range(workers):
            p = ctx.Process(target=run_worker, args=(url, f"sw{w}", agents, folder))
            p.start()
            procs.append(p)
        _wait(lambda: client.scard(keys.agents) == workers * agents, "agents", 120)
        start_at = time.time() + WARMUP
        stop_at = start_at + WINDOW
        out: mp.Queue[object] = ctx.Queue()
        consumer = ctx.Process(target=run_consumer, args=(url, out, stop_at, start_at))
        consumer.start()
        time.sleep(max(0.0, start_at - time.time()))
        pids = [cast(int, p.pid) for p in procs]
        before = [cpu_seconds(server.pid), *[cpu_seconds(p) for p in pids], cpu_seconds(bot.pid)]
        first_id = _last_id(client, keys)
        wall = time.monotonic()
        sent = _probe(client, keys, fake, stop_at)
        wall = time.monotonic() - wall
        after = [cpu_seconds(server.pid), *[cpu_seconds(p) for p in pids], cpu_seconds(bot.pid)]
        used = [(b - a) / wall * 100 for a, b in zip(before, after, strict=True)]
        run = Run(workers, agents)
        run.events_per_s = len(stream_entries(client, keys.events, first_id, "+")) / wall
        run.redis_cpu, run.worker_cpu, run.bot_cpu = used[0], used[1:-1], used[-1]
        run.worker_mb = [rss_mb(p) for p in pids]
        run.consumer = cast(list[float], out.get(timeout=60))
        consumer.join()
        run.bot = _probe_latencies(fake, sent)
        return run
    finally:
        for proc in procs:
            if proc.pid:
                os.kill(proc.pid, signal.SIGTERM)
        for proc in procs:
            proc.join(30)
        if bot is not None:
            bot.terminate()
            bot.wait(30)
        fake.stop()
        server.terminate()
        server.wait(10)
        shutil.rmtree(folder, ignore_errors=True)


def _pings(client: redis.Redis) -> bool:
    try:
        return bool(client.ping())
    except redis.ConnectionError:
        return False


def _wait(check: Any, what: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise SystemExit(f"timed out waiting for {what}")
        time.sleep(0.05)


def _last_id(client: redis.Redis, keys: Keys) -> str:
    last = cast(list[tuple[str, Any]], client.xrevrange(keys.events, count=1))
    return f"({last[0][0]}" if last else "-"


def _start_bot(url: str, fake: TimedFake, folder: str) -> subprocess.Popen[bytes]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("IB_")}
    env.update(
        IB_REDIS_URL=url,
        IB_NAMESPACE=NAMESPACE,
        IB_SPOOL_DIR=folder,
        IB_TELEGRAM_TOKEN=fake.token,
        IB_TELEGRAM_CHAT_ID=str(fake.chat_id),
        IB_TELEGRAM_ALLOWED_USERS="4242",
        IB_TELEGRAM_API_URL=fake.base_url,
        IB_TELEGRAM_TIME_SCALE="1000",
    )
    with (Path(folder) / "bot.log").open("ab") as log:
        proc = subprocess.Popen([sys.executable, "-m", "bot"], env=env, cwd=folder, stdout=log, stderr=log)
    _wait(lambda: fake.calls("getUpdates") > 0 or proc.poll() is not None, "the bot")
    return proc


def _probe(client: redis.Redis, keys: Keys, fake: TimedFake, stop_at: float) -> dict[str, float]:
    """Probe events into the bound project topic until `stop_at`; returns marker → publish time."""
    sent: dict[str, float] = {}
    n = 0
    while time.time() < stop_at:
        marker = f"+ probe-{n} added"
        sent[marker] = time.monotonic()
        publish(client, keys, make_event("task_added", task=f"probe-{n}", project="bench"), 100_000)
        n += 1
        time.sleep(1 / PROBES_PER_SECOND)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and len(_probe_latencies(fake, sent)) < len(sent):
        time.sleep(0.05)
    return sent


def _probe_latencies(fake: TimedFake, sent: dict[str, float]) -> list[float]:
    with fake.lock:
        arrived = list(fake.arrived)
    found: dict[str, float] = {}
    for t, text in arrived:
        for n in PROBE.findall(text):
            marker = f"+ probe-{n} added"
            if marker in sent and marker not in found:
                found[marker] = (t - sent[marker]) * 1000
    return list(found.values())


def _ms(samples: list[float]) -> str:
    if not samples:
        return "no samples"
    return f"n={len(samples)} p50={percentile(samples, 50):.1f} ms p99={percentile(samples, 99):.1f} ms"


def report(run: Run) -> None:
    total = run.workers * run.agents
    print(f"== {run.workers} worker(s) × {run.agents} agents = {total} agents; window {WINDOW:g} s")
    print(f"  state events/s (all kinds on the stream): {run.events_per_s:,.0f}")
    print(f"  event → consumer group reader:        {_ms(run.consumer)}")
    print(f"  event → sendMessage at the fake (bot): {_ms(run.bot)}")
    print(f"  Redis CPU: {run.redis_cpu:.1f} % of a core   bot CPU: {run.bot_cpu:.1f} %")
    cpu = ", ".join(f"{c:.1f}" for c in run.worker_cpu)
    mb = ", ".join(f"{m:.0f}" for m in run.worker_mb)
    print(f"  workers' CPU % of a core: {cpu}   (sum {sum(run.worker_cpu):.1f} %)")
    print(f"  workers' memory (RSS, MB): {mb}")


def main() -> None:
    shapes = sys.argv[1:] or ["1x100", "10x100"]
    print(f"({os.cpu_count()} CPUs; Redis {redis_version()} of the benchmark's own; warm-up {WARMUP:g} s)")
    for shape in shapes:
        workers, agents = (int(x) for x in shape.split("x"))
        report(scenario(workers, agents))


def redis_version() -> str:
    done = subprocess.run(["redis-server", "--version"], capture_output=True, text=True, check=False)
    return next((w.split("=")[1] for w in done.stdout.split() if w.startswith("v=")), "?")


if __name__ == "__main__":
    threading.excepthook = lambda args: None  # the fake's threads end with the benchmark
    main()
