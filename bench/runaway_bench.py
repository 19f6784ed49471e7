"""The runaway watchdog: how soon a 20-call loop (the same Bash call, 20 times in a row) is seen and paused,
beside what one tool call's PreToolUse hook costs, all in the same run.

  loop → event     20 runs of `ib hook pre-tool-use`, started as Claude Code starts it (a fresh process
                   with the payload on stdin), one after the other, for one agent and the same Bash call.
                   The watchdog (worker.budgets.watchdog, its thread in this process, on the real Redis)
                   reads the calls the hook records. The clock starts when the IB_RUNAWAY_REPEATS-th call
                   (6 by default) is spawned, the first the loop can be told by, and stops when a blocking
                   XREAD sees the `runaway` event. Also from the loop's first call, and how many of the 20
                   calls ran before the first refusal.
  hook (checks)    one allowed call's hook, spawn to exit, with the hold check and the call recorded (one
                   Redis round trip): what every tool call of an agent now waits for
  hook (baseline)  the same hook without a worker id (as before budgets: the path rules only, no Redis)

    .venv/bin/python -m bench.runaway_bench [--samples 10]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import cast

import redis

from bench.common import IB, REDIS_URL, ib_env, process_times, scratch_namespace, summary_ms
from bus.connection.clients import client_for
from bus.events.streams import Entry
from bus.settings.settings import Settings
from bus.wire.keys import Keys
from worker.budgets.watchdog import Watchdog
from worker.runtime import Runtime

WORKER = "w-bench"
LOOP = 20
DEADLINE = 30.0


def _payload(root: Path) -> bytes:
    call = {"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "ls -la"}}
    return json.dumps({**call, "cwd": str(root)}).encode()


def _hook(env: dict[str, str], payload: bytes) -> tuple[float, bool]:
    """One hook run: when it was spawned (perf_counter), and whether it refused the call."""
    started = time.perf_counter()
    done = subprocess.run(
        [IB, "hook", "pre-tool-use"], env=env, input=payload, capture_output=True, check=True
    )
    return started, b'"deny"' in done.stdout


def _runaway_seen(client: redis.Redis, keys: Keys, agent: str, after: str, found: list[float]) -> None:
    """Block on the events stream until the agent's `runaway` event; note when it was seen."""
    last = after
    deadline = time.monotonic() + DEADLINE
    while time.monotonic() < deadline:
        reply = cast("list[tuple[str, list[Entry]]]", client.xread({keys.events: last}, block=1000) or [])
        for _stream, entries in reply:
            for entry_id, fields in entries:
                last = entry_id
                event = json.loads(fields["e"])
                if event["type"] == "runaway" and event["agent"] == agent:
                    found.append(time.perf_counter())
                    return


def _one_loop(
    env: dict[str, str], root: Path, client: redis.Redis, keys: Keys, n: int, repeats: int
) -> tuple[float, float, int]:
    agent = f"loop-{n}"
    (root / ".ib" / "agents" / agent).mkdir(parents=True)
    seen: list[float] = []
    tail = cast("list[tuple[str, Entry]]", client.xrevrange(keys.events, count=1))
    watcher = threading.Thread(
        target=_runaway_seen, args=(client, keys, agent, tail[0][0] if tail else "0", seen), daemon=True
    )
    watcher.start()
    calls = [_hook({**env, "IB_AGENT_ID": agent}, _payload(root)) for _ in range(LOOP)]
    watcher.join(DEADLINE)
    if not seen:
        raise TimeoutError(f"no runaway event for {agent} within {DEADLINE}s")
    ran = next((i for i, (_at, refused) in enumerate(calls) if refused), LOOP)
    return seen[0] - calls[repeats - 1][0], seen[0] - calls[0][0], ran


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=10, help="loops of 20 calls (default 10)")
    args = parser.parse_args()
    with scratch_namespace() as namespace, tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "repo"
        (root / ".git").mkdir(parents=True)
        (root / ".ib" / "agents" / "one").mkdir(parents=True)
        settings = Settings(redis_url=REDIS_URL, namespace=namespace, worker_id=WORKER)
        rt = Runtime(settings, client_for(REDIS_URL), root)
        stopping = threading.Event()
        env = ib_env(namespace, str(Path(tmp) / "spool"), IB_ROOT=str(root), IB_AGENT_ROLE="worker")
        checked = {**env, "IB_WORKER_ID": WORKER}
        # the hook alone first, before the watchdog runs (agent `one` is never paused while it is timed),
        # in turns of ten so that both see the same load
        with_checks: list[float] = []
        baseline: list[float] = []
        for _turn in range(4):
            for into, hook_env in ((with_checks, checked), (baseline, env)):
                walls, _cpu = process_times(
                    [IB, "hook", "pre-tool-use"], {**hook_env, "IB_AGENT_ID": "one"}, _payload(root), runs=10
                )
                into.extend(walls)
        watchdog = Watchdog(rt, client_for(REDIS_URL, blocking=True), stopping)
        watchdog.start()
        try:
            repeats = settings.runaway_repeats
            detect, from_start, ran = [], [], []
            for n in range(args.samples):
                to_event, whole, through = _one_loop(checked, root, rt.client, rt.keys, n, repeats)
                detect.append(to_event)
                from_start.append(whole)
                ran.append(through)
        finally:
            stopping.set()
            if watchdog.thread is not None:
                watchdog.thread.join(5)
    print(
        f"runaway watchdog, {args.samples} loops of {LOOP} identical Bash calls, "
        f"IB_RUNAWAY_REPEATS={settings.runaway_repeats}"
    )
    print(f"  call {settings.runaway_repeats} → runaway event  {summary_ms(detect)}")
    print(f"  call 1 → runaway event  {summary_ms(from_start)}")
    print(f"  calls run before the first refusal: {sorted(ran)} (of {LOOP})")
    print(f"  hook (checks)    {summary_ms(with_checks)}")
    print(f"  hook (baseline)  {summary_ms(baseline)}")


if __name__ == "__main__":
    main()
