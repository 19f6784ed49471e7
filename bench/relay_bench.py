"""What the worker's relay adds to an agent's `ib notify`: the same command run by an agent's process
directly (as Claude Code runs a lone `ib` outside the sandbox) and through the relay (as a sandboxed `ib`
sends it, minus Claude Code's proxy: the client here connects to the relay itself). Median of --runs
each, on the Redis at IB_TEST_REDIS_URL (default redis://127.0.0.1:6379/0) in a namespace of its own,
whose keys it deletes afterwards.

    .venv/bin/python -m bench.relay_bench [--runs 20]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import redis

from tests.cli import IB, init_repo
from worker.boundary.relay import Relay

ASK = """import socket, sys
from worker.boundary.relay_wire import Request, decode_reply, encode_request
port, cwd = sys.argv[1:]
with socket.create_connection(("127.0.0.1", int(port))) as s:
    s.sendall(encode_request(Request(("notify", "bench"), cwd)))
    sys.exit(decode_reply(s.makefile("rb").readline()).code)
"""


def _median_ms(command: list[str], env: dict[str, str], cwd: Path, runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(command, env=env, cwd=cwd, check=True, capture_output=True)
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    url = os.environ.get("IB_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")
    namespace = f"ibbench:{uuid.uuid4().hex[:8]}:"
    with tempfile.TemporaryDirectory() as tmp:
        repo = init_repo(Path(tmp) / "repo")
        wt = repo / ".ib" / "agents" / "a1" / "repo"
        wt.mkdir(parents=True)
        base = {k: v for k, v in os.environ.items() if not k.startswith("IB_")}
        agent = {
            **base,
            "IB_REDIS_URL": url,
            "IB_NAMESPACE": namespace,
            "IB_AGENT_ID": "a1",
            "IB_AGENT_ROLE": "worker",
            "IB_AGENT_WORKTREE": str(wt),
        }
        os.environ.update({"IB_REDIS_URL": url, "IB_NAMESPACE": namespace})
        relay = Relay(str(IB), 0)
        relay.start()
        try:
            direct = _median_ms([str(IB), "notify", "bench"], agent, wt, args.runs)
            relayed = _median_ms(
                [sys.executable, "-c", ASK, str(relay.address[1]), str(wt)], agent, wt, args.runs
            )
        finally:
            relay.close()
            client = redis.Redis.from_url(url)
            keys = list(client.scan_iter(match=f"{namespace}*"))
            if keys:
                client.delete(*keys)
    print(f"ib notify as an agent, median of {args.runs} (ms)")
    print(f"  direct (a lone ib, outside the sandbox)   {direct:7.0f}")
    print(f"  through the relay (client to answer)      {relayed:7.0f}")


if __name__ == "__main__":
    main()
