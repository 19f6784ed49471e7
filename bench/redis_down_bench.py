"""Wall time of the Stop hook and `ib notify` while Redis is away (goal: at most 1 s, so an agent's turn is
never held up), beside the same commands with Redis up, in the same run.

    .venv/bin/python -m bench.redis_down_bench          # 60 runs of each
    IB_BENCH_RUNS=200 .venv/bin/python -m bench.redis_down_bench

Three states of a redis-server of the benchmark's own (loopback, free port): up; stopped (connection
refused); frozen with SIGSTOP (the connection opens, nothing answers: the 0.5 s IB_CONNECT_TIMEOUT runs
out). Every event that could not be sent is spooled; the spool is checked to hold them all.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import redis

from bench.common import IB, percentile
from bus.connection.embedded import free_port, server_binary

RUNS = int(os.environ.get("IB_BENCH_RUNS", "60"))


def _server(folder: Path, port: int) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen(
        [server_binary(), "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--dir", str(folder)],
        stdout=subprocess.DEVNULL,
    )
    client = redis.Redis(port=port)
    for _ in range(100):
        try:
            client.ping()
            return proc
        except redis.ConnectionError:
            time.sleep(0.05)
    raise SystemExit("redis-server did not start")


def _walls(cmd: list[str], env: dict[str, str], stdin: str) -> list[float]:
    samples = []
    for i in range(RUNS):
        start = time.perf_counter()
        subprocess.run(
            cmd, env=env, input=stdin.replace("TURN", str(i)).encode(), capture_output=True, check=True
        )
        samples.append(time.perf_counter() - start)
    return samples


def _figures(samples: list[float]) -> str:
    ms = [s * 1000 for s in samples]
    return f"p50 {percentile(ms, 50):6.1f} ms  p99 {percentile(ms, 99):6.1f} ms  max {max(ms):6.1f} ms"


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder, port = Path(tmp), free_port()
        repo = folder / "repo"
        (repo / ".git").mkdir(parents=True)
        base = {k: v for k, v in os.environ.items() if not k.startswith("IB_")}
        env = {
            **base,
            "IB_REDIS_URL": f"redis://127.0.0.1:{port}/0",
            "IB_NAMESPACE": "ibbench:",
            "IB_SPOOL_DIR": str(folder / "spool"),
            "IB_AGENT_ID": "bench-agent",
            "IB_ROOT": str(repo),
        }
        stop = json.dumps(
            {"session_id": "s", "cwd": str(repo), "last_assistant_message": "turn TURN\nWAITING"}
        )
        commands = {"ib hook stop": ([IB, "hook", "stop"], stop), "ib notify": ([IB, "notify", "bench"], "")}
        server = _server(folder, port)
        print(f"machine: {os.cpu_count()} cores; {RUNS} runs each; IB_CONNECT_TIMEOUT 0.5 s")
        try:
            for state in ("up", "stopped (refused)", "frozen (SIGSTOP)"):
                if state.startswith("stopped"):
                    server.send_signal(signal.SIGSTOP)  # frozen first would leave half-open connections
                    server.send_signal(signal.SIGKILL)
                    server.wait()
                if state.startswith("frozen"):
                    server = _server(folder, port)
                    server.send_signal(signal.SIGSTOP)
                for label, (cmd, stdin) in commands.items():
                    print(f"  Redis {state:18s} {label:13s} {_figures(_walls(cmd, env, stdin))}")
        finally:
            server.send_signal(signal.SIGKILL)
            server.wait()
        kept = sum(len(p.read_text().splitlines()) for p in (folder / "spool").glob("*.jsonl"))
        print(f"  spooled while away: {kept} events (expected {4 * RUNS})")


if __name__ == "__main__":
    main()
