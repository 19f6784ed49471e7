"""Gemini CLI's hook path: the wall time of `ib hook gemini` beside `python3 -c pass` and Claude Code's
`ib hook event`, and from its spawn to the event on the bus.

    .venv/bin/python -m bench.gemini_hook_bench [--samples N] [--real-samples N]

Each sample starts the hook as Gemini CLI 0.61.0 starts it: a fresh process with the payload on stdin
(payloads shaped as tests/fixtures/gemini-0.61.0/hooks-one-session.jsonl has them). `permission` is a
Notification with `notification_type: ToolPermission`; `complete` an AfterAgent whose reply ends with the
marker (through the Stop hook's code). The agent's state is set back to `running` before each sample, so
every one makes its event (in the wall-time runs only the first does: the repeats are dropped as in a
session, for both hooks alike). Last, the real Gemini CLI (pinned, `ib new-agent --cli gemini` against
the scripted Gemini API, its worker running): from the moment the stand-in sent a turn's last chunk to the
`complete` event on the bus (its stream id's time), through the hooks. The pane path's figure is not
measured here.

A Gemini CLI agent's pane has no bus address: its hooks go through the worker's relay (a second `ib`,
outside the box). The "relayed" lines run the same hook so, against a relay in this process (no bubblewrap
around the hook: the box's own start-up is Gemini CLI's, not the hook's); the others reach Redis directly,
as the hooks did before.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import redis

from bench.common import IB, REDIS_URL, ib_env, percentile, process_times, scratch_namespace
from bus.settings.relay_port import VIA_RELAY
from bus.wire.keys import Keys
from tests.cli import init_repo
from tests.fake_gemini.client import MODEL, client_env
from tests.fake_gemini.script import reply
from tests.fake_gemini.server import FakeGemini
from worker.boundary.relay import Relay
from worker.markers import COMPLETION_MARKER

AGENT = "bench-gem"


def payload(kind: str, n: int) -> dict[str, object]:
    base = {"session_id": f"bench-{n}", "transcript_path": "", "cwd": "/nonexistent",
            "timestamp": f"2026-11-27T02:00:{n % 60:02d}.{n:03d}Z"}  # fmt: skip
    if kind == "permission":
        details = {"type": "exec", "title": "Confirm Shell Command", "command": f"make sample-{n}"}
        return {**base, "hook_event_name": "Notification", "notification_type": "ToolPermission",
                "message": "Tool Confirm Shell Command requires execution", "details": details}  # fmt: skip
    return {**base, "hook_event_name": "AfterAgent", "prompt": "go", "stop_hook_active": False,
            "prompt_response": f"Sample {n}.\nI HAVE COMPLETED THE GOAL"}  # fmt: skip


def _events_after(client: Any, stream: str, after: str, wait_ms: int) -> list[tuple[str, str]]:
    """(entry id, event type) of the entries after `after`, waiting up to `wait_ms` for the first."""
    found = client.xread({stream: after}, block=wait_ms, count=10) or []
    return [(i.decode(), json.loads(f[b"e"])["type"]) for _s, entries in found for i, f in entries]


def to_bus(kind: str, samples: int, env: dict[str, str], client: Any, keys: Keys) -> list[float]:
    """Seconds from the hook's spawn to its event on the bus."""
    took: list[float] = []
    for n in range(samples):
        client.hset(keys.agent(AGENT), mapping={"state": "running", "project": "bench"})
        last = client.xrevrange(keys.events, count=1)
        after = last[0][0].decode() if last else "0"
        start = time.perf_counter()
        subprocess.Popen(
            [IB, "hook", "gemini"], env=env, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL
        ).communicate(json.dumps(payload(kind, n)).encode())
        while True:
            seen = _events_after(client, keys.events, after, 10000)
            if not seen or kind in [t for _i, t in seen]:
                break
            after = seen[-1][0]
        took.append(time.perf_counter() - start)
    return took


def _completes(client: Any, stream: str) -> list[float]:
    """The times (from their stream ids) of the `complete` events so far."""
    entries = client.xrange(stream)
    return [int(i.split(b"-")[0]) / 1000 for i, f in entries if json.loads(f[b"e"])["type"] == "complete"]


def real_turn_ends(samples: int, deadline: float = 120.0) -> list[float]:
    """Seconds from each turn's last chunk sent to its `complete` event, a real Gemini CLI agent's."""
    socket = f"ibbench-{uuid.uuid4().hex[:8]}"
    with FakeGemini() as fake, tempfile.TemporaryDirectory() as tmp, scratch_namespace() as namespace:
        repo = init_repo(Path(tmp) / "repo")
        (Path(tmp) / "person").mkdir()
        variables = client_env(fake.base_url, Path(tmp) / "person")
        env = ib_env(namespace, tmp, IB_TMUX_SOCKET=socket, IB_MODEL=MODEL, **variables)
        env["IB_WORKER_ID"] = f"w-{uuid.uuid4().hex[:6]}"
        fake.script(*[reply(f"Turn {n} done.\n{COMPLETION_MARKER}") for n in range(samples)])
        client = redis.Redis.from_url(REDIS_URL)
        stream = Keys(namespace).events
        ib = [IB]
        took: list[float] = []
        worker = _worker(env, repo, client, namespace)
        try:
            spawn = [*ib, "new-agent", "turn 0", "--name", "lat", "--cli", "gemini"]
            subprocess.run(spawn, cwd=repo, env=env, check=True, capture_output=True)
            for n in range(samples):
                limit = time.monotonic() + deadline
                while len(done := _completes(client, stream)) <= n and time.monotonic() < limit:
                    time.sleep(0.05)
                if len(done) <= n:
                    break
                took.append(done[n] - fake.turn_ends()[n])
                if n + 1 < samples:
                    subprocess.run(
                        [*ib, "send", "lat", f"turn {n + 1}"],
                        cwd=repo,
                        env=env,
                        capture_output=True,
                        check=False,
                    )
        finally:
            subprocess.run(
                [*ib, "kill", "lat", "--force"], cwd=repo, env=env, capture_output=True, check=False
            )
            subprocess.run(["tmux", "-L", socket, "kill-server"], capture_output=True, check=False)
            worker.send_signal(signal.SIGTERM)
            worker.wait(30)
            client.close()
        return took


def _worker(env: dict[str, str], repo: Path, client: Any, namespace: str) -> subprocess.Popen[bytes]:
    """`ib worker` for the agent (its relay carries the hooks), up once its heartbeat is on the bus."""
    worker = subprocess.Popen(
        [IB, "worker"], cwd=repo, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    heartbeat = Keys(namespace).worker(env["IB_WORKER_ID"])
    limit = time.monotonic() + 30
    while not client.exists(heartbeat) and worker.poll() is None and time.monotonic() < limit:
        time.sleep(0.05)
    return worker


def line(name: str, walls: list[float]) -> str:
    ms = [w * 1000 for w in walls]
    return f"  {name:<34} p50={percentile(ms, 50):7.1f} ms  p99={percentile(ms, 99):7.1f} ms"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=20)
    parser.add_argument("--real-samples", type=int, default=5, help="turns of a real Gemini CLI agent")
    args = parser.parse_args(argv)
    with scratch_namespace() as namespace, tempfile.TemporaryDirectory() as spool:
        env = ib_env(namespace, spool, IB_AGENT_ID=AGENT)
        relay = Relay(IB, 0, REDIS_URL)
        relay.start()
        boxed = {k: v for k, v in env.items() if k != "IB_REDIS_URL"}
        boxed.update(
            {VIA_RELAY: "1", "IB_RELAY": f"127.0.0.1:{relay.address[1]}", "IB_AGENT_WORKTREE": os.getcwd()}
        )
        keys = Keys(namespace)
        client = redis.Redis.from_url(REDIS_URL)
        client.hset(keys.agent(AGENT), mapping={"state": "running", "project": "bench"})
        stdin = json.dumps(payload("permission", 0)).encode()
        claude_payload = {"hook_event_name": "Notification", "notification_type": "permission_prompt",
                          "message": "Claude needs your permission", "cwd": "/"}  # fmt: skip
        claude = json.dumps(claude_payload).encode()
        print(f"== process wall time ({args.samples} runs each, the payload on stdin)")
        print(
            line("python3 -c pass", process_times([sys.executable, "-c", "pass"], env, b"", args.samples)[0])
        )
        for name, cmd, given, where in (
            ("ib hook gemini (Notification)", [IB, "hook", "gemini"], stdin, env),
            ("  relayed", [IB, "hook", "gemini"], stdin, boxed),
            ("ib hook event (Claude Notification)", [IB, "hook", "event"], claude, env),
        ):
            client.hset(keys.agent(AGENT), "state", "running")
            print(line(name, process_times(cmd, where, given, args.samples)[0]))
        print(f"== hook spawned → its event on the bus, read once it exited ({args.samples} per kind)")
        for kind in ("permission", "complete"):
            for name, where in ((kind, env), (f"{kind}, relayed", boxed)):
                print(
                    line(name, to_bus(kind, args.samples, where, client, keys)) + "   (goal: p99 ≤ 1000 ms)"
                )
        relay.close()
        client.close()
    if args.real_samples:
        print(
            f"== real Gemini CLI: a turn's last chunk sent → complete on the bus ({args.real_samples} turns)"
        )
        took = real_turn_ends(args.real_samples)
        missed = f"   ({args.real_samples - len(took)} missed)" if len(took) < args.real_samples else ""
        print(line("complete (hook path)", took) + missed if took else "  no turn ended in time")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
