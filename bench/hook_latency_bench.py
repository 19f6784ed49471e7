"""The hook path's latency, beside the pane-only path: how soon a person hears that an agent completed,
waits, asks a question, asks permission or hit an API error.

    .venv/bin/python -m bench.hook_latency_bench [--samples N] [--real-samples N] [--skip-real]

1. Hook fired → event on the bus → sendMessage at the fake Bot API. The hook command Claude Code runs
   (`ib hook stop` for complete / waiting, `ib hook event` for question, permission and error) is started
   as Claude Code starts it, a fresh process with the payload on stdin; the clock starts when it is
   spawned. A blocking XREAD notes the event on the bus; the bot (`python -m bot`, against the fake Bot
   API) notes the sendMessage into the agent's topic.
2. Real Claude Code (the pinned CLI, offline against the scripted Messages API, `LatencyRig` of
   bench/state_latency_bench.py): from the state first read on screen to the event on the bus, with the
   agent's hooks on (the hook path) and off (the pane-only path, `state` events of `ib worker`, default
   IB_PANE_INTERVAL=1). Negative: the hook's event was on the bus before the screen showed the state.
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from typing import Any, cast

import redis

from bench.bot_bench import SCALE, TELEGRAM, TimedFake, start_bot, stop_bot
from bench.common import IB, REDIS_URL, ib_env, percentile, scratch_namespace
from bench.state_latency_bench import TURNS, LatencyRig, state_event
from bus.wire.keys import Keys
from tests.fake_anthropic import ask_user_question, bash, reply
from tests.fake_anthropic.script import Turn

GAP = 4.0 / SCALE  # real seconds between two samples: well inside the group's 20 messages a minute
DEADLINE = 30.0
KINDS = ("complete", "waiting", "question", "permission", "error")


def payload(kind: str, n: int) -> tuple[str, dict[str, object]]:
    """(hook name, payload) for one sample of `kind`, as Claude Code 2.1.332 sends it."""
    base: dict[str, object] = {"session_id": f"bench-{n}", "transcript_path": "", "cwd": "/nonexistent"}
    if kind in ("complete", "waiting"):
        marker = "I HAVE COMPLETED THE GOAL" if kind == "complete" else "WAITING"
        return "stop", {**base, "hook_event_name": "Stop", "stop_hook_active": False,
                        "last_assistant_message": f"Sample {n}.\n\n{marker}"}  # fmt: skip
    if kind == "question":
        options = [{"label": "A", "description": ""}, {"label": "B", "description": ""}]
        question = f"Which one ({n})?"
        questions = [{"question": question, "header": "Q", "multiSelect": False, "options": options}]
        return "event", {**base, "hook_event_name": "PermissionRequest", "tool_name": "AskUserQuestion",
                         "tool_input": {"questions": questions}}  # fmt: skip
    if kind == "permission":
        return "event", {**base, "hook_event_name": "PermissionRequest", "tool_name": "Bash",
                         "tool_input": {"command": f"make sample-{n}"}}  # fmt: skip
    return "event", {**base, "hook_event_name": "StopFailure", "error": "overloaded",
                     "last_assistant_message": "API Error: 529 Overloaded"}  # fmt: skip


def hook_path(samples: int) -> dict[str, tuple[list[float], list[float]]]:
    """kind → (seconds to the bus, seconds to sendMessage) per sample."""
    fake = TimedFake(time_scale=SCALE, rates=TELEGRAM)
    results: dict[str, tuple[list[float], list[float]]] = {k: ([], []) for k in KINDS}
    with scratch_namespace() as ns, tempfile.TemporaryDirectory() as folder, fake:
        client = redis.Redis.from_url(REDIS_URL, decode_responses=True)
        keys = Keys(ns)
        env = ib_env(ns, folder)
        proc = start_bot(fake, ns, folder)
        try:
            for n in range(samples + 1):  # the first round warms the connections up
                for kind in KINDS:
                    agent = f"b{n}-{kind}"
                    client.hset(
                        keys.agent(agent), mapping={"id": agent, "state": "running", "project": "bench"}
                    )
                    client.hset(keys.topics("agent"), agent, str(fake.create_topic(agent)))
                    bus, telegram = _one(client, keys, fake, env, agent, *payload(kind, n))
                    if n:
                        results[kind][0].append(bus)
                        results[kind][1].append(telegram)
                    time.sleep(GAP)
        finally:
            stop_bot(proc)
    return results


def _one(
    client: redis.Redis,
    keys: Keys,
    fake: TimedFake,
    env: dict[str, str],
    agent: str,
    hook: str,
    body: dict[str, object],
) -> tuple[float, float]:
    last = cast(str, (client.xrevrange(keys.events, count=1) or [("0-0", {})])[0][0])
    arrived: list[float] = []
    watcher = threading.Thread(target=_await, args=(keys, last, agent, arrived), daemon=True)
    watcher.start()
    fired = time.monotonic()
    subprocess.run(
        [IB, "hook", hook], input=json.dumps(body), env={**env, "IB_AGENT_ID": agent}, capture_output=True,
        text=True, check=True, timeout=DEADLINE,
    )  # fmt: skip
    watcher.join(DEADLINE)
    deadline = time.monotonic() + DEADLINE
    shown = None
    while shown is None and time.monotonic() < deadline:
        with fake.lock:
            shown = next((t for t, text in fake.arrived if agent in text and t >= fired), None)
        if shown is None:
            time.sleep(0.0005)
    if not arrived or shown is None:
        raise RuntimeError(f"no event or no message for {agent}")
    return arrived[0] - fired, shown - fired


def _await(keys: Keys, last: str, agent: str, arrived: list[float]) -> None:
    client = redis.Redis.from_url(REDIS_URL, decode_responses=True)
    deadline = time.monotonic() + DEADLINE
    while not arrived and time.monotonic() < deadline:
        answer = cast(
            list[tuple[str, list[tuple[str, dict[str, str]]]]], client.xread({keys.events: last}, block=1000)
        )
        for _name, entries in answer or []:
            for entry_id, fields in entries:
                last = entry_id
                if json.loads(fields["e"]).get("agent") == agent and not arrived:
                    arrived.append(time.monotonic())
    client.close()


def _event_type(kind: str) -> Callable[[dict[str, Any]], bool]:
    return lambda e: e.get("type") == kind


ASKED_COMMAND = 'make clean all; echo "exit=$?"'
# kind → (state the pane parser reads, the scripted turn)
REAL: dict[str, tuple[str, Callable[[], Turn]]] = {
    "complete": ("complete", TURNS["complete"]),
    "waiting": ("waiting", TURNS["waiting"]),
    "question": ("permission", lambda: reply("One question.", ask_user_question("Which one?", ["A", "B"]))),
    # a command with `$?`: the sandbox cannot vouch for it before it runs, so Claude Code asks
    "permission": ("permission", lambda: reply("Rebuilding.", bash(ASKED_COMMAND, "Rebuild"))),
    "error": ("error", TURNS["error"]),
}


def real_paths(samples: int) -> dict[str, dict[str, list[float]]]:
    """path (hooks / pane) → kind → seconds from the screen to the event, real Claude Code; a sample
    whose event never came within the rig's deadline counts as infinite (shown as missed)."""
    out: dict[str, dict[str, list[float]]] = {}
    for path, hooks in (("hooks", True), ("pane", False)):
        results: dict[str, list[float]] = {k: [] for k in REAL}
        with scratch_namespace() as namespace:
            rig = LatencyRig(namespace, 1.0, hooks=hooks).start()
            try:
                for _ in range(samples):
                    for kind, (shown, turn) in REAL.items():
                        matches = _event_type(kind) if hooks else state_event(shown)
                        try:
                            results[kind].append(rig.measure(shown, turn(), matches))
                        except RuntimeError:
                            results[kind].append(math.inf)
            finally:
                rig.stop()
        out[path] = results
    return out


def _ms(values: list[float]) -> str:
    ms = [v * 1000 for v in values if math.isfinite(v)]
    missed = len(values) - len(ms)
    if not ms:
        return f"all {missed} missed"
    shown = f"p50={percentile(ms, 50):7.1f} ms  p99={percentile(ms, 99):7.1f} ms"
    return shown + (f"  ({missed} missed)" if missed else "")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=20, help="per kind, hook → bus → Telegram")
    parser.add_argument("--real-samples", type=int, default=5, help="per kind and path, real Claude Code")
    parser.add_argument("--skip-real", action="store_true", help="only the hook → bus → Telegram part")
    args = parser.parse_args()
    print(f"== hook fired → event on the bus → sendMessage at the fake Bot API ({args.samples} per kind)")
    for kind, (bus, telegram) in hook_path(args.samples).items():
        print(f"  {kind:<11} bus {_ms(bus)}   Telegram {_ms(telegram)}   (goal: p99 ≤ 1000 ms)")
    if args.skip_real:
        return
    print(f"== real Claude Code: state on screen → event on the bus ({args.real_samples} per kind and path)")
    print(f"  {'':<11} {'hook path':<34} pane-only path (IB_PANE_INTERVAL=1)")
    real = real_paths(args.real_samples)
    for kind in REAL:
        print(f"  {kind:<11} {_ms(real['hooks'][kind]):<34} {_ms(real['pane'][kind])}")


if __name__ == "__main__":
    main()
