"""Codex CLI agents: how long ittybus's hook and notify processes take, and how soon a turn's end is on
the bus by Codex's own signals beside when the pane first shows it.

    .venv/bin/python -m bench.codex_bench [--runs N] [--turns N]

1. Process wall time (fresh processes, payload as Codex passes it; `python3 -c pass` as the baseline from
   the same run): `ib hook codex` with a real PermissionRequest payload (records the dialog, publishes
   `permission`) and with a Stop payload (publishes `complete`, a new turn id each run); `ib hook
   codex-notify` with a turn's notify JSON (the same end: a new turn id each run) and with the hidden
   title thread's (read and dropped).
2. The real Codex CLI 0.169.0 (`ib new-agent --cli codex`, offline against the scripted Responses API,
   its worker running: the agent's box holds no bus address, its hooks and notify go through the
   worker's relay): per turn, the moment the stand-in sent the last byte of the turn's final answer,
   then the `complete` event's stream id (hook / notify path) and the first moment a tmux capture every
   50 ms reads the turn's end with the Codex screen parser (the pane path's floor: `ib worker`'s watcher
   reads every IB_PANE_INTERVAL, 1 s by default, on top).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import cast

import redis

from bench.common import (
    IB,
    REDIS_URL,
    ib_env,
    pane_text,
    percentile,
    process_times,
    scratch_namespace,
    worker_running,
)
from bus.wire.keys import Keys
from tests.cli import init_repo
from tests.fake_openai import API_KEY, FakeOpenAI, reply, write_codex_home
from tests.fake_openai.client import KEY_VARIABLE
from worker.markers import COMPLETION_MARKER
from worker.programs.codex.screen import codex_pane_state
from worker.tmux.pane_state import PaneState

FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "codex-0.169.0" / "signals"
AGENT = "bench-codex"


def _ms(samples: list[float]) -> str:
    ms = [s * 1000 for s in samples]
    return f"p50 {percentile(ms, 50):7.1f} ms   p99 {percentile(ms, 99):7.1f} ms   (n={len(ms)})"


def _payload(name: str, turn: str = "") -> dict[str, object]:
    payload = json.loads((FIXTURES / name).read_text(encoding="utf-8"))
    if turn:
        payload["turn_id" if "hook_event_name" in payload else "turn-id"] = turn
    return dict(payload)


def process_figures(runs: int) -> None:
    with scratch_namespace() as namespace, tempfile.TemporaryDirectory() as spool:
        env = ib_env(namespace, spool, IB_AGENT_ID=AGENT)
        redis.Redis.from_url(REDIS_URL).hset(Keys(namespace).agent(AGENT), mapping={"state": "running"})
        base, _ = process_times([sys.executable, "-c", "pass"], env, runs=runs)
        rows = [("python3 -c pass (baseline)", base)]
        permission = json.dumps(_payload("permission-hook-permission-request.json")).encode()
        rows.append(
            (
                "ib hook codex  PermissionRequest",
                process_times([IB, "hook", "codex"], env, permission, runs)[0],
            )
        )
        walls = []
        for _ in range(runs):
            stop = json.dumps(_payload("complete-hook-stop.json", uuid.uuid4().hex)).encode()
            walls += process_times([IB, "hook", "codex"], env, stop, runs=1)[0]
        rows.append(("ib hook codex  Stop (publishes complete)", walls))
        walls = []
        for _ in range(runs):
            notify = json.dumps(_payload("complete-notify.json", uuid.uuid4().hex))
            walls += process_times([IB, "hook", "codex-notify", notify], env, runs=1)[0]
        rows.append(("ib hook codex-notify  turn end (publishes)", walls))
        title = json.dumps(_payload("none-notify-title-thread.json"))
        rows.append(
            (
                "ib hook codex-notify  title thread (dropped)",
                process_times([IB, "hook", "codex-notify", title], env, runs=runs)[0],
            )
        )
    print(f"process wall time, {runs} runs each (command: python -m bench.codex_bench --runs {runs})")
    for what, samples in rows:
        print(f"  {what:46s} {_ms(samples)}")


def _first_end_on_screen(socket: str, session: str, said: str, deadline: float) -> float | None:
    """When the screen first reads the end of the turn whose reply is `said` (50 ms polls)."""
    while time.time() < deadline:
        screen = pane_text(socket, session)
        if said in screen and codex_pane_state(screen) == PaneState.COMPLETE:
            return time.time()
        time.sleep(0.05)
    return None


def _complete_events(rds: redis.Redis, keys: Keys) -> list[float]:
    """When each `complete` event of the agent went on the bus (its stream id's milliseconds)."""
    found = []
    entries = cast(list[tuple[bytes, dict[bytes, bytes]]], rds.xrange(keys.events))
    for entry_id, fields in entries:
        event = json.loads(fields[b"e"])
        if event.get("type") == "complete" and event.get("agent") == AGENT:
            found.append(int(entry_id.decode().split("-")[0]) / 1000)
    return found


def latency_figures(turns: int) -> None:
    socket = f"ibbench-{uuid.uuid4().hex[:8]}"
    with scratch_namespace() as namespace, tempfile.TemporaryDirectory() as work, FakeOpenAI() as fake:
        repo = init_repo(Path(work) / "repo")
        home = write_codex_home(Path(work) / "person-codex-home", fake.base_url, [])
        env = ib_env(namespace, str(Path(work) / "spool"), IB_TMUX_SOCKET=socket, IB_DEFAULT_CLI="codex")
        env |= {"CODEX_HOME": str(home), KEY_VARIABLE: API_KEY, "IB_AGENT_ENV": KEY_VARIABLE}
        env |= {"IB_WORKER_ID": f"w-{uuid.uuid4().hex[:6]}"}
        rds, keys = redis.Redis.from_url(REDIS_URL), Keys(namespace)
        hook_path, pane_path = [], []
        try:
            with worker_running(env, repo):  # its relay carries the hooks and notify
                for turn in range(turns):
                    said = f"Turn {turn} is done."
                    fake.script(reply(f"{said}\n\n{COMPLETION_MARKER}"))
                    if turn == 0:
                        cmd = [IB, "new-agent", "--cli", "codex", "--name", AGENT, "say done"]
                    else:
                        cmd = [IB, "send", AGENT, f"turn {turn}"]
                    subprocess.run(cmd, env=env, cwd=repo, check=True, capture_output=True)
                    listed = subprocess.run(
                        [IB, "list", "--json"], env=env, cwd=repo, check=True, capture_output=True
                    )
                    session = json.loads(listed.stdout)[0]["session"]
                    deadline = time.time() + 90
                    shown = _first_end_on_screen(socket, session, said, deadline)
                    while len(_complete_events(rds, keys)) <= turn and time.time() < deadline:
                        time.sleep(0.02)
                    events = _complete_events(rds, keys)
                    if len(events) > turn and shown is not None:
                        moment = fake.turn_ends()[-1]
                        hook_path.append(events[turn] - moment)
                        pane_path.append(shown - moment)
        finally:
            subprocess.run(["tmux", "-L", socket, "kill-server"], capture_output=True, check=False)
            Path(f"/tmp/tmux-{os.getuid()}/{socket}").unlink(missing_ok=True)
    print(
        f"turn end → seen, {len(hook_path)} turns of the real Codex CLI "
        f"(python -m bench.codex_bench --turns {turns})"
    )
    print(f"  complete event on the bus (hook / notify)      {_ms(hook_path)}")
    print(f"  end first read on the screen (50 ms polls)     {_ms(pane_path)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--turns", type=int, default=10)
    args = parser.parse_args()
    process_figures(args.runs)
    latency_figures(args.turns)


if __name__ == "__main__":
    main()
