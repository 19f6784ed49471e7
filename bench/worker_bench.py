"""Benchmarks of the worker: the cost of watching idle agents' panes, and the agents' hooks.

    .venv/bin/python -m bench.worker_bench              # both
    .venv/bin/python -m bench.worker_bench panes 25 100  # pane watching for some sizes only
    .venv/bin/python -m bench.worker_bench hooks

1. Pane watching: CPU seconds per minute of `ib worker` (and of the tmux server answering it) with
   N idle fake agents (every other one in auto mode) at 1 s resolution, beside a naive watcher that
   captures every pane every second.
2. Process time of `ib hook stop` and `ib hook pre-tool-use` beside `python3 -c pass`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import redis

from bench.common import IB, REDIS_URL, cpu_seconds, ib_env, percentile, process_times, scratch_namespace
from bus.stores.agent_store import Agent, AgentStore
from bus.wire.keys import Keys
from worker.tmux.client import Tmux

WINDOW = float(os.environ.get("IB_BENCH_WINDOW", "30"))


def _start_agents(tmux: Tmux, store: AgentStore, count: int, worker: str, folder: Path) -> None:
    command = f"{sys.executable} -m worker.fake.agent 'fake: wait'"
    env = {"IB_FAKE_TRANSCRIPT_DIR": str(folder / "transcripts")}
    for i in range(count):
        name = f"ib-bench-a{i}"
        tmux.new_session(name, folder, command, env, width=120, height=40)
        now = time.time()
        store.save(
            Agent(
                id=f"a{i}",
                session=name,
                worker=worker,
                root=str(folder),
                permission_mode="auto" if i % 2 else "acceptEdits",  # auto mode: watched closely, running
                created_at=now,
                state="waiting",
                state_at=now,
            )
        )
    deadline = time.time() + 120
    while time.time() < deadline:  # until every fake agent drew its idle screen
        ready = sum("WAITING" in tmux.capture(f"ib-bench-a{i}") for i in range(0, count, max(1, count // 10)))
        if ready >= len(range(0, count, max(1, count // 10))):
            break
        time.sleep(1)
    time.sleep(3)


def _tmux_server_pid(tmux: Tmux) -> int:
    out = subprocess.run(
        ["tmux", "-L", str(tmux.socket_name), "display-message", "-p", "#{pid}"],
        capture_output=True,
        text=True,
        check=True,
    )
    return int(out.stdout.strip())


def _measure(pid: int, server: int) -> tuple[float, float]:
    a, s = cpu_seconds(pid), cpu_seconds(server)
    time.sleep(WINDOW)
    per_minute = 60 / WINDOW
    return (cpu_seconds(pid) - a) * per_minute, (cpu_seconds(server) - s) * per_minute


NAIVE = """
import sys, time
from worker.tmux.client import Tmux
tmux = Tmux(sys.argv[1])
names = [f"ib-bench-a{i}" for i in range(int(sys.argv[2]))]
while True:
    start = time.monotonic()
    for name in names:
        tmux.capture(name)
    time.sleep(max(0.0, 1.0 - (time.monotonic() - start)))
"""


def bench_panes(sizes: list[int]) -> None:
    print(f"== pane watching, idle fake agents, 1 s resolution, CPU seconds per minute (window {WINDOW:g} s)")
    for count in sizes:
        socket_name = f"ibbench-{uuid.uuid4().hex[:6]}"
        tmux = Tmux(socket_name, config_file="/dev/null")
        with scratch_namespace() as ns, tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp)
            (folder / ".git").mkdir()
            client = redis.Redis.from_url(REDIS_URL, decode_responses=True)
            worker_id = f"bench-{count}"
            _start_agents(tmux, AgentStore(client, Keys(ns)), count, worker_id, folder)
            server = _tmux_server_pid(tmux)
            env = ib_env(
                ns, str(folder / "spool"), IB_TMUX_SOCKET=socket_name, IB_WORKER_ID=worker_id, IB_ROOT=tmp
            )
            ours = subprocess.Popen(
                [IB, "worker"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=tmp
            )
            time.sleep(3)
            worker_cpu, server_cpu = _measure(ours.pid, server)
            ours.terminate()
            ours.wait()
            naive = subprocess.Popen([sys.executable, "-c", NAIVE, socket_name, str(count)], env=env)
            time.sleep(2)
            naive_cpu, naive_server = _measure(naive.pid, server)
            naive.kill()
            naive.wait()
            tmux.kill_server()
            client.close()
        print(
            f"  {count:4d} agents: ib worker {worker_cpu:5.2f} s/min + tmux {server_cpu:5.2f} s/min "
            f"= {(worker_cpu + server_cpu) / 60 * 100:5.1f}% of a core | naive capture-all "
            f"{naive_cpu:5.2f} + tmux {naive_server:5.2f} s/min "
            f"= {(naive_cpu + naive_server) / 60 * 100:5.1f}% of a core"
        )


def bench_hooks(runs: int = 60) -> None:
    print(f"== hook process time ({runs} runs each; median wall and CPU)")
    with scratch_namespace() as ns, tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        agent_dir = root / ".ib" / "agents" / "a1"
        (agent_dir / "repo").mkdir(parents=True)
        env = ib_env(ns, str(root / "spool"), IB_AGENT_ID="a1", IB_ROOT=tmp, IB_AGENT_ROLE="worker")
        read = json.dumps(
            {
                "tool_name": "Read",
                "tool_input": {"file_path": str(agent_dir / "repo" / "x.py")},
                "cwd": str(agent_dir / "repo"),
            }
        )
        bash = json.dumps(
            {
                "tool_name": "Bash",
                "tool_input": {"command": "cd src && make test"},
                "cwd": str(agent_dir / "repo"),
            }
        )
        stop = json.dumps(
            {
                "session_id": "s",
                "transcript_path": "",
                "cwd": str(agent_dir / "repo"),
                "hook_event_name": "Stop",
                "last_assistant_message": "All done.\nI HAVE COMPLETED THE GOAL",
            }
        )
        rows = [
            ("python3 -c pass", [sys.executable, "-c", "pass"], b""),
            ("ib hook pre-tool-use (Read)", [IB, "hook", "pre-tool-use"], read.encode()),
            ("ib hook pre-tool-use (Bash)", [IB, "hook", "pre-tool-use"], bash.encode()),
            ("ib hook stop", [IB, "hook", "stop"], stop.encode()),
        ]
        results = [(label, *process_times(cmd, env, data, runs)) for label, cmd, data in rows]
    base_wall, base_cpu = percentile(results[0][1], 50), percentile(results[0][2], 50)
    for label, walls, cpus in results:
        wall, cpu = percentile(walls, 50), percentile(cpus, 50)
        print(
            f"  {label:30s} wall {wall * 1000:6.1f} ms ({wall / base_wall:4.2f}x)"
            f"   cpu {cpu * 1000:6.1f} ms ({cpu / base_cpu:4.2f}x)"
        )


def main() -> None:
    which = sys.argv[1] if len(sys.argv) > 1 else "all"
    print(f"machine: {os.cpu_count()} cores")
    if which in ("all", "panes"):
        bench_panes([int(a) for a in sys.argv[2:]] or [25, 100, 200])
    if which in ("all", "hooks"):
        bench_hooks()


if __name__ == "__main__":
    main()
