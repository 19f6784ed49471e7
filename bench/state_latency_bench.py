"""Time from an agent state appearing on screen to its event on the bus: the pane-only path.

    .venv/bin/python -m bench.state_latency_bench [--samples N] [--intervals 1.0,0.25] [--kinds K,...]

One real Claude Code agent (the pinned CLI, offline against the scripted Messages API) is spawned with
`ib new-agent` and served by `ib worker`. Its hooks are switched off (`disableAllHooks` in its private
HOME), so every state reaches the bus through the pane watcher alone. Scripted turns cycle through the
kinds (complete, waiting, error, rate_limited, permission). A probe captures the pane every PROBE_EVERY
seconds and notes when the parser first reads the new state: the state "appeared" then (within the probe's
resolution). A blocking XREAD on the events stream notes when the worker's `state` event arrives. The
figure per kind is the difference, p50 / p99, for each IB_PANE_INTERVAL asked for (1.0 is the default).

`LatencyRig` is the reusable part: `rig.measure(kind, turn, matches)` runs one scripted turn and returns
the latency of the first event `matches` accepts. The hook path (cc-hooks) runs the same rig with
`hooks=True` and a matcher for its own event types, and prints its figures beside these.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import redis

from bench.common import IB, REDIS_URL, ib_env, percentile, scratch_namespace
from bus.wire.keys import Keys
from tests.cli import init_repo
from tests.fake_anthropic import (
    FakeAnthropic,
    bash,
    claude_binary,
    client_env,
    overloaded,
    rate_limited,
    reply,
)
from tests.fake_anthropic.client import write_home
from tests.fake_anthropic.script import Turn
from worker.agents.layout import session_name
from worker.tmux.pane_state import pane_state

PROBE_EVERY = 0.02  # seconds between two captures of the probe: the resolution of "appeared"
DEADLINE = 60.0  # seconds one sample may take at most
Event = dict[str, Any]
Matcher = Callable[[Event], bool]


def state_event(kind: str) -> Matcher:
    """The worker's `state` event that moves the agent to `kind`."""
    return lambda e: e.get("type") == "state" and (e.get("data") or {}).get("to_state") == kind


# kind → the scripted turn that ends in it; the cycle never repeats a state, so each one is a change
TURNS: dict[str, Callable[[], Turn]] = {
    "complete": lambda: reply("Done.\n\nI HAVE COMPLETED THE GOAL"),
    "waiting": lambda: reply("Which colour should it be?\n\nWAITING"),
    "error": overloaded,
    "rate_limited": rate_limited,
    "permission": lambda: reply("I need to rebuild.", bash("rm -rf build && make", "Rebuild")),
}


@dataclass
class LatencyRig:
    """A repository, a bus namespace, `ib worker` and one real Claude Code agent in a tmux of its own."""

    namespace: str
    pane_interval: float
    hooks: bool = False
    work: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="ib-latency-")))
    socket: str = field(default_factory=lambda: f"ibbench-{uuid.uuid4().hex[:8]}")
    fake: FakeAnthropic = field(default_factory=FakeAnthropic)
    agent: str = "bench"
    _worker: subprocess.Popen[bytes] | None = None

    def start(self) -> LatencyRig:
        self.fake.start()
        repo = init_repo(self.work / "repo")
        settings = {} if self.hooks else {"disableAllHooks": True}
        home = write_home(self.work / "home", [repo], settings)
        self.env = ib_env(
            self.namespace,
            str(self.work / "spool"),
            **client_env(self.fake.base_url, home),
            IB_TMUX_SOCKET=self.socket,
            IB_WORKER_ID=f"bench-{uuid.uuid4().hex[:6]}",
            IB_PANE_INTERVAL=str(self.pane_interval),
            IB_AGENT_COMMAND=f"{claude_binary()} --permission-mode default",
            IB_STATUS_NODE_AUTO="false",
        )
        self._worker = subprocess.Popen(
            [IB, "worker"], cwd=repo, env=self.env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        self.fake.script(reply("Ready.\n\nWAITING"))
        subprocess.run(
            [IB, "new-agent", "wait for orders", "--name", self.agent],
            cwd=repo,
            env=self.env,
            check=True,
            capture_output=True,
        )
        self.session = session_name(repo, self.agent)
        self._until(
            lambda: "Ready." in self.screen() and "esc to interrupt" not in self.screen(), "first turn"
        )
        return self

    def stop(self) -> None:
        if self._worker is not None:
            self._worker.terminate()
            self._worker.wait(timeout=30)
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True, check=False)
        Path(f"/tmp/tmux-{os.getuid()}/{self.socket}").unlink(missing_ok=True)
        self.fake.stop()
        shutil.rmtree(self.work, ignore_errors=True)

    def screen(self) -> str:
        done = subprocess.run(
            ["tmux", "-L", self.socket, "capture-pane", "-p", "-t", f"={self.session}:"],
            capture_output=True,
            text=True,
            check=False,
        )
        return done.stdout

    def keys(self, *keys: str) -> None:
        subprocess.run(["tmux", "-L", self.socket, "send-keys", "-t", f"={self.session}:", *keys], check=True)

    def _until(self, check: Callable[[], bool], what: str) -> None:
        deadline = time.monotonic() + DEADLINE
        while not check():
            if time.monotonic() > deadline:
                raise RuntimeError(f"no {what} within {DEADLINE}s; screen:\n{self.screen()}")
            time.sleep(PROBE_EVERY)

    def measure(self, kind: str, turn: Turn, matches: Matcher) -> float:
        """Send one prompt answered by `turn`; seconds from the pane first reading `kind` to the first
        event `matches` accepts (negative when the event came before the probe saw the screen)."""
        arrived: list[float] = []
        watcher = threading.Thread(target=self._await_event, args=(matches, arrived), daemon=True)
        self.fake.script(turn)
        time.sleep(random.uniform(0, self.pane_interval))  # start at any phase of the watcher's tick
        watcher.start()
        self.keys("-l", f"go {kind}")
        self.keys("Enter")
        seen: list[float] = []
        self._until(lambda: _note(seen, pane_state(self.screen()).value == kind), f"{kind} on screen")
        watcher.join(DEADLINE)
        if not arrived:
            raise RuntimeError(f"no event for {kind} within {DEADLINE}s")
        if kind == "permission":
            self.keys("Escape")  # dismiss the dialog: the turn ends and the next one can start
            self._until(lambda: pane_state(self.screen()).value == "waiting", "the dismissed dialog")
        return arrived[0] - seen[0]

    def _await_event(self, matches: Matcher, arrived: list[float]) -> None:
        client = redis.Redis.from_url(REDIS_URL, decode_responses=True)
        stream = Keys(self.namespace).events
        last = "$"
        deadline = time.monotonic() + DEADLINE
        while time.monotonic() < deadline:
            answer = cast(
                list[tuple[str, list[tuple[str, dict[str, str]]]]], client.xread({stream: last}, block=1000)
            )
            for _name, entries in answer or []:
                for entry_id, fields in entries:
                    last = entry_id
                    if matches(json.loads(fields["e"])):
                        arrived.append(time.monotonic())
                        client.close()
                        return
        client.close()


def _note(seen: list[float], hit: bool) -> bool:
    if hit and not seen:
        seen.append(time.monotonic())
    return hit


def bench(samples: int, intervals: list[float], kinds: list[str]) -> None:
    print(
        f"== pane path: state on screen → `state` event on the bus (real Claude Code, {samples} per kind,"
        f" probe every {PROBE_EVERY * 1000:.0f} ms)"
    )
    for interval in intervals:
        results: dict[str, list[float]] = {kind: [] for kind in kinds}
        with scratch_namespace() as namespace:
            rig = LatencyRig(namespace, interval).start()
            try:
                for _ in range(samples):
                    for kind in kinds:
                        results[kind].append(rig.measure(kind, TURNS[kind](), state_event(kind)))
            finally:
                rig.stop()
        print(f"  IB_PANE_INTERVAL={interval:g}{' (default)' if interval == 1.0 else ''}")
        for kind, values in results.items():
            ms = [v * 1000 for v in values]
            print(
                f"    {kind:<13} n={len(ms):<3} p50={percentile(ms, 50):7.1f} ms"
                f"  p99={percentile(ms, 99):7.1f} ms  max={max(ms):7.1f} ms"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=10)
    parser.add_argument("--intervals", default="1.0,0.25")
    parser.add_argument("--kinds", default=",".join(TURNS))
    args = parser.parse_args()
    kinds = [k for k in args.kinds.split(",") if k]
    unknown = [k for k in kinds if k not in TURNS]
    if unknown:
        parser.error(f"unknown kind {', '.join(unknown)}; use {', '.join(TURNS)}")
    bench(args.samples, [float(i) for i in args.intervals.split(",")], kinds)


if __name__ == "__main__":
    main()
