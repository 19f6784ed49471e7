"""Scale: W workers × A agents on one Redis, every agent changing state every few seconds.

    .venv/bin/python -m bench.scale_bench                 # 1 × 100, then 10 × 100
    .venv/bin/python -m bench.scale_bench 4x100 10x100    # any WxA
    .venv/bin/python -m bench.scale_bench 4x250 --restart-redis   # and then Redis restarted

What is real and what is simulated. Each worker is a process running the real `WorkerService` (its
heartbeat, the sweep for dead workers, its inbox — one XREADGROUP on its command stream and on every
event —, the merge queue and the /auto hooks, the transcript tailer). Only the tmux panes are
simulated: the pane watcher's tick is replaced by a schedule that, for every agent due, records a new
state through the real `PaneWatcher.record` (the same writes and `state` event the watcher makes when
a pane changes). Every agent changes state every 2–4 s (uniform), so 1,000 agents make about 333
events a second. One consumer process reads the events stream through a consumer group (as `ib listen`
and `ib events --group` do) and notes each event's age; the real bot (`python -m bot -v`: its log says
what it folded) runs against the fake Bot API (limits off; the bot's own pacing on a clock TIME_SCALE
times faster than Telegram's: 20 messages per 0.61 s), routing every event. The first TOPICS_PER_WORKER
agents of each worker have a topic of their own, so their `state` events reach Telegram (more than the
chat's budget carries: the bot folds them into digests); needs-you probes (a `question` of a probe
agent, 4 a second, in the bound project topic and the probe's own) measure event → sendMessage, and the
bot's log gives the routine events folded.

Redis is a redis-server of the benchmark's own (no persistence unless restarted), so its CPU is ours
alone. CPU % is CPU time over wall time in the measured window (100 % = one core); memory is the resident
set. Each worker logs (warnings and up, as `ib worker`) to a file of the run, the bot (`-v`) to another:
no worker ever stops, so every "worker … stopped answering" in them is a false liveness alarm.

`--restart-redis`: Redis keeps an append-only file (`appendfsync everysec`, so the window's figures include
its writes), and after the window it is restarted (SIGTERM, then started again on the same port and dir);
bench/redis_restart.py says what is measured then.
"""

from __future__ import annotations

import json
import logging
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
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import redis

from bench import redis_restart
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
PROBE = re.compile(r"probe-(\d+) needs you")
FOLDED_IN_ALL = re.compile(r"\((\d+) folded in all\)")
FOLDED = re.compile(r"(\d+) events? folded")
TIME_SCALE = os.environ.get("IB_BENCH_TIME_SCALE", "100")  # the bot's clock against Telegram's
TOPICS_PER_WORKER = int(os.environ.get("IB_BENCH_TOPICS", "100"))  # agents of each worker with a topic
NAMESPACE = "ib:"
DRAIN = 30.0  # seconds the probes may take to show after the window
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

    def tick(self, agents: list[Agent] | None = None) -> None:
        rt = self.watcher.rt
        agents = rt.agents.of_worker(rt.worker_id) if agents is None else agents  # as PaneWatcher.tick
        now = time.monotonic()
        for agent in agents:
            when = self.due.setdefault(agent.id, now + self.rng.uniform(0, 3))
            if now >= when:
                self.watcher.record(agent, self.rng.choice([s for s in STATES if s != agent.state]))
                self.due[agent.id] = now + self.rng.uniform(2, 4)


def run_worker(url: str, worker_id: str, agents: int, folder: str) -> None:
    log_file = (Path(folder) / f"{worker_id}.log").open("a")  # the process's stderr until it ends
    os.dup2(log_file.fileno(), 2)  # a traceback the worker dies of lands there too
    logging.basicConfig(
        level=logging.WARNING, format="%(asctime)s %(levelname)s %(name)s %(message)s", force=True
    )
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
    probes: int = 0  # needs-you probes published
    routed: int = 0  # state events of agents with a topic, while probing (the window and the probes' drain)
    folded: int = 0  # routine events the bot folded into digests, over the whole run
    in_digests: int = 0  # of those, shown in a digest Telegram accepted before the end
    alarms: int = 0  # "worker … stopped answering" in the workers' and the bot's logs (none stopped)
    errors: list[str] = field(default_factory=list)  # error lines and tracebacks in those logs
    restart: redis_restart.Restart | None = None  # --restart-redis: what the restart after the window did


def scenario(workers: int, agents: int, restart_redis: bool = False) -> Run:
    folder = tempfile.mkdtemp(prefix="ib-scale-")
    subprocess.run(["git", "init", "-q", folder], check=True)  # the workers' repository (no agents use it)
    port = free_port()
    command = redis_restart.server_command(port, folder, persistent=restart_redis)
    server = subprocess.Popen(command, stdout=subprocess.DEVNULL)
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
        topics = _bind_agent_topics(client, keys, fake, workers, min(agents, TOPICS_PER_WORKER))
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
        window = stream_entries(client, keys.events, first_id, "+")
        run.events_per_s = len(window) / wall
        run.routed = sum(1 for _i, f in window if json.loads(f["e"]).get("agent") in topics)
        run.redis_cpu, run.worker_cpu, run.bot_cpu = used[0], used[1:-1], used[-1]
        run.worker_mb = [rss_mb(p) for p in pids]
        run.consumer = cast(list[float], out.get(timeout=60))
        consumer.join()
        run.bot = _probe_latencies(fake, sent)
        run.probes = len(sent)
        run.folded = _folded(Path(folder) / "bot.log")
        run.in_digests = sum(
            int(n)
            for thread in set(topics.values())
            for text in fake.topic_texts(thread)
            for n in FOLDED.findall(text)
        )
        names = [f"sw{w}" for w in range(workers)]
        run.alarms, run.errors = _logged(Path(folder), names)
        if restart_redis:
            server, run.restart = redis_restart.restart(
                server, command, url, names, pids, Path(folder), cpu_seconds, workers * agents / 3
            )
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


def _logged(folder: Path, workers: list[str]) -> tuple[int, list[str]]:
    """False liveness alarms, and error lines or tracebacks, in the workers' and the bot's logs so far."""
    alarms, errors = 0, []
    for name in [*workers, "bot"]:
        path = folder / f"{name}.log"
        for line in path.read_text(errors="replace").splitlines() if path.exists() else []:
            alarms += bool(redis_restart.STOPPED.search(line))
            if redis_restart.ERRORS.search(line):
                errors.append(f"{name}: {line.strip()}")
    return alarms, errors


def _folded(bot_log: Path) -> int:
    """Routine events the bot folded into digests, as its last digest line says."""
    found = FOLDED_IN_ALL.findall(bot_log.read_text(errors="replace")) if bot_log.exists() else []
    return int(found[-1]) if found else 0


def _bind_agent_topics(
    client: redis.Redis, keys: Keys, fake: TimedFake, workers: int, each: int
) -> dict[str, int]:
    """A topic for the first `each` agents of every worker (as the bot made them when they spawned)."""
    topics = {f"sw{w}-a{n}": fake.create_topic(f"sw{w}-a{n}") for w in range(workers) for n in range(each)}
    if topics:
        client.hset(keys.topics("agent"), mapping={agent: str(thread) for agent, thread in topics.items()})
    return topics


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
        IB_TELEGRAM_TIME_SCALE=TIME_SCALE,
    )
    with (Path(folder) / "bot.log").open("ab") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "bot", "-v"], env=env, cwd=folder, stdout=log, stderr=log
        )
    _wait(lambda: fake.calls("getUpdates") > 0 or proc.poll() is not None, "the bot")
    return proc


def _probe(client: redis.Redis, keys: Keys, fake: TimedFake, stop_at: float) -> dict[str, float]:
    """Probe events into the bound project topic until `stop_at`; returns marker → publish time."""
    sent: dict[str, float] = {}
    n = 0
    while time.time() < stop_at:
        marker = f"probe-{n} needs you"
        sent[marker] = time.monotonic()
        question = make_event(
            "question", agent="probe", project="bench", data={"question": marker, "question_id": f"q{n}"}
        )
        publish(client, keys, question, 100_000)
        n += 1
        time.sleep(1 / PROBES_PER_SECOND)
    deadline = time.monotonic() + DRAIN
    while time.monotonic() < deadline and len(_probe_latencies(fake, sent)) < len(sent):
        time.sleep(0.05)
    return sent


def _probe_latencies(fake: TimedFake, sent: dict[str, float]) -> list[float]:
    with fake.lock:
        arrived = list(fake.arrived)
    found: dict[str, float] = {}
    for t, text in arrived:
        for n in PROBE.findall(text):
            marker = f"probe-{n} needs you"
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
    shown = f"{len(run.bot)} of {run.probes} shown within {DRAIN:g} s"
    print(f"  needs-you → sendMessage (bot, probes): {_ms(run.bot)} ({shown})")
    print(
        f"  state events of agents with a topic: {run.routed:,} while probing;"
        f" routine events folded: {run.folded:,} ({run.in_digests:,} shown in digests by the end)"
    )
    print(f"  Redis CPU: {run.redis_cpu:.1f} % of a core   bot CPU: {run.bot_cpu:.1f} %")
    cpu = ", ".join(f"{c:.1f}" for c in run.worker_cpu)
    mb = ", ".join(f"{m:.0f}" for m in run.worker_mb)
    print(f"  workers' CPU % of a core: {cpu}   (sum {sum(run.worker_cpu):.1f} %)")
    print(f"  workers' memory (RSS, MB): {mb}")
    print(f"  false liveness alarms (worker … stopped answering; none stopped): {run.alarms}")
    print(f"  errors and tracebacks in the workers' and the bot's logs: {len(run.errors)}")
    for line, n in Counter(run.errors).most_common(10):
        print(f"    {n}× {line[:300]}")
    if run.restart is not None:
        redis_restart.report(run.restart)


def main() -> None:
    restart_redis = "--restart-redis" in sys.argv[1:]
    shapes = [a for a in sys.argv[1:] if a != "--restart-redis"] or ["1x100", "10x100"]
    print(f"({os.cpu_count()} CPUs; Redis {redis_version()} of the benchmark's own; warm-up {WARMUP:g} s)")
    for shape in shapes:
        workers, agents = (int(x) for x in shape.split("x"))
        report(scenario(workers, agents, restart_redis))


def redis_version() -> str:
    done = subprocess.run(["redis-server", "--version"], capture_output=True, text=True, check=False)
    return next((w.split("=")[1] for w in done.stdout.split() if w.startswith("v=")), "?")


if __name__ == "__main__":
    threading.excepthook = lambda args: None  # the fake's threads end with the benchmark
    main()
