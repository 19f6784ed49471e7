"""Usage limits with the real Claude Code: from the limit to the `limited` event, and from the reset to the
resumed turn, each beside its baseline from the same run.

    .venv/bin/python -m bench.limit_bench [--agents N]

One `ib worker` and N real Claude Code agents (the pinned CLI, offline against the scripted Messages API).
Each agent's first turn is answered 429 with the unified headers and "· resets H:MMam (UTC)", the same
reset for all (a whole minute, about a minute after the last one is parked). limit → event: from the
429's arrival at the stand-in to the `limited` event on the bus (its stream id's milliseconds); baseline:
the same for a 529 that ends a turn (`error`, the same hook path). reset → resumed turn: from the reset
to the resumed turn's request at the stand-in; baseline: `ib send AGENT continue` by hand to the request
it makes (typing into the pane and the CLI's own start of a turn).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import subprocess
import tempfile
import time
import uuid
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TypeVar

import redis

from bench.common import IB, REDIS_URL, ib_env, scratch_namespace, summary_ms
from bus.wire.keys import Keys
from tests.cli import init_repo
from tests.fake_anthropic import FakeAnthropic, claude_binary, client_env, overloaded, reply, usage_limited
from tests.fake_anthropic.client import write_home
from tests.fake_anthropic.script import Turn
from tests.streams import stream_entries

DONE = "Went on.\n\nI HAVE COMPLETED THE GOAL"
DEADLINE = 90.0


T = TypeVar("T")


def _until(check: Callable[[], T | None], limit: float = DEADLINE) -> T:
    deadline = time.monotonic() + limit
    while (found := check()) is None:
        if time.monotonic() > deadline:
            raise RuntimeError("timed out")
        time.sleep(0.05)
    return found


def _event_at(rds: redis.Redis, keys: Keys, agent: str, type_: str) -> float | None:
    for entry_id, fields in stream_entries(rds, keys.events):
        event = json.loads(fields["e"])
        if event.get("agent") == agent and event.get("type") == type_:
            return int(str(entry_id).split("-")[0]) / 1000
    return None


def _request_at(fake: FakeAnthropic, agent: str, after: float) -> float | None:
    for request in fake.turns_taken():
        if request.at >= after and f"(id {agent})" in str(request.user_text()):
            return request.at
    return None


def _ib(repo: Path, env: dict[str, str], *args: str) -> None:
    subprocess.run([IB, *args], cwd=repo, env=env, capture_output=True, check=True)


def _start_until(
    rds: redis.Redis, keys: Keys, fake: FakeAnthropic, repo: Path, env: dict[str, str], name: str, turn: Turn,
    told: str,
) -> float:  # fmt: skip
    """Start agent `name` whose first turn gets `turn`; seconds from that turn's request to the event."""
    fake.script(turn)
    asked = time.time()
    _ib(repo, env, "new-agent", "add a flag", "--name", name)
    at = _until(lambda: _event_at(rds, keys, name, told))
    return at - _until(lambda: _request_at(fake, name, asked))


def run(agents: int) -> None:
    work = Path(tempfile.mkdtemp(prefix="ib-limit-bench-"))
    socket = f"ibbench-{uuid.uuid4().hex[:8]}"
    with scratch_namespace() as namespace, FakeAnthropic() as fake:
        rds = redis.Redis.from_url(REDIS_URL, decode_responses=True)
        keys = Keys(namespace)
        repo = init_repo(work / "repo")
        env = ib_env(
            namespace,
            str(work / "spool"),
            **client_env(fake.base_url, write_home(work / "home", [repo])),
            IB_TMUX_SOCKET=socket,
            IB_WORKER_ID=f"bench-{uuid.uuid4().hex[:6]}",
            IB_AGENT_COMMAND=str(claude_binary()),
            IB_STATUS_NODE_AUTO="false",
        )
        worker = subprocess.Popen(
            [IB, "worker"], cwd=repo, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        try:
            reset = float(math.ceil((time.time() + 60 + 20 * agents) / 60) * 60)
            fake.set_default(reply(DONE))
            names = [f"capped-{i}" for i in range(agents)]
            to_event = [_start_until(rds, keys, fake, repo, env, name, usage_limited(reset), "limited")
                        for name in names]  # fmt: skip
            base_event = _start_until(rds, keys, fake, repo, env, "base", overloaded(), "error")
            to_turn = [
                _until(partial(_request_at, fake, name, reset), reset - time.time() + DEADLINE) - reset
                for name in names
            ]
            for name in names:
                _until(partial(_event_at, rds, keys, name, "complete"))
            typed = time.time()
            subprocess.run(
                [IB, "send", "base", "continue"], cwd=repo, env=env, capture_output=True, check=True
            )
            base_send = _until(lambda: _request_at(fake, "base", typed)) - typed
        finally:
            worker.terminate()
            worker.wait(timeout=30)
            subprocess.run(["tmux", "-L", socket, "kill-server"], capture_output=True, check=False)
            Path(f"/tmp/tmux-{os.getuid()}/{socket}").unlink(missing_ok=True)
            shutil.rmtree(work, ignore_errors=True)
    print(f"command: .venv/bin/python -m bench.limit_bench --agents {agents}")
    print(f"limit -> limited event ({agents} agents):  {summary_ms(to_event)}")
    print(f"  baseline, 529 -> error event (1 agent):   {base_event * 1000:.0f} ms")
    print(f"reset -> resumed turn's request ({agents}):  {summary_ms(to_turn)}")
    print(f"  baseline, ib send -> its request (1):     {base_send * 1000:.0f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", type=int, default=3, help="agents that hit the limit (default 3)")
    run(parser.parse_args().agents)


if __name__ == "__main__":
    main()
