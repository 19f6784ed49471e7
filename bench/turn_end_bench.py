"""From the moment a turn's outcome exists to the person hearing of it: the real Claude Code, every kind
of turn end and dialog, with the agents' hooks (the default configuration) beside the pane-only path.

    .venv/bin/python -m bench.turn_end_bench [--runs N]

One `ib worker`, one bot (`python -m bot` against the fake Bot API, its clock and the bot's limits ×SCALE
as in bench/bot_bench.py) and eight real Claude Code agents (the pinned CLI, offline against the
scripted Messages API, a HOME with no `defaultMode`): for each of ittybus's default mode (acceptEdits),
manual, auto and plan, one agent as `ib new-agent` starts it and one whose settings lose their `hooks`
on the way to the CLI (a wrapper in IB_AGENT_COMMAND), so that only the pane watcher tells. Per sample:
the moment is when the stand-in sent the last byte of the turn that causes the outcome; then the first
event on the bus that tells it (its stream id's milliseconds), and the first sendMessage at the fake
Bot API that shows it. Both paths of a row run in the same rounds, one after the other.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import redis

from bench.bot_bench import SCALE, TELEGRAM, start_bot, stop_bot
from bench.common import IB, REDIS_URL, ib_env, percentile, scratch_namespace
from bench.hook_latency_bench import ASKED_COMMAND
from bus.wire.keys import Keys
from tests.cli import init_repo
from tests.fake_anthropic import (
    CLAUDE_CODE_VERSION,
    FakeAnthropic,
    ask_user_question,
    bash,
    claude_binary,
    client_env,
    exit_plan_mode,
    overloaded,
    reply,
)
from tests.fake_anthropic.client import write_home
from tests.fake_anthropic.script import Turn
from tests.fake_telegram import FakeTelegram
from tests.fake_telegram.api import Params
from worker.agents.layout import session_name
from worker.tmux.dialogs import read_dialog
from worker.tmux.pane_state import pane_state

DEADLINE = 20.0  # seconds from the moment within which the event and the message must come
GAP = 0.5  # seconds between samples, after the agent is idle again
AUTO_PROBE = 'curl -s http://127.0.0.1:9/ ; echo "rc=$?"'  # compound: auto mode's check cannot pass it
PATHS = ("hooks", "pane")


@dataclass(frozen=True)
class Kind:
    """A row: the agent's mode (None: ittybus's default), the turn, and what tells it on the bus (event
    types, or a `state` event to `state`) and in Telegram (words of the message)."""

    label: str
    mode: str | None
    turn: Callable[[], Turn]
    types: frozenset[str]
    state: str
    words: tuple[str, ...]

    @property
    def dialog(self) -> bool:
        return self.state == "permission"

    def told_by(self, event: dict[str, Any]) -> bool:
        moved = event.get("type") == "state" and (event.get("data") or {}).get("to_state") == self.state
        return moved or event.get("type") in self.types


DIALOG = frozenset({"permission", "question"})
SHOWN_DIALOG = ("🔐", "❓", "📋", "→ permission")


def _ends(label: str, turn: Callable[[], Turn], state: str, words: tuple[str, ...]) -> Kind:
    """A turn end in ittybus's default mode: its own event, or the pane's `state` event."""
    return Kind(label, None, turn, frozenset({state}), state, words)


def _asks(label: str, mode: str | None, turn: Callable[[], Turn]) -> Kind:
    """A dialog: a `permission` or `question` event (the hook's or the pane's), or a `state` event."""
    return Kind(label, mode, turn, DIALOG, "permission", SHOWN_DIALOG)


def _rebuild() -> Turn:
    return reply("Rebuilding.", bash(ASKED_COMMAND, "Rebuild"))


ROWS: dict[str, Kind] = {
    "complete": _ends(
        "complete",
        lambda: reply("Done.\n\nI HAVE COMPLETED THE GOAL"),
        "complete",
        ("completed", "→ complete"),
    ),
    "waiting": _ends(
        "waiting (no marker)", lambda: reply("Postgres or SQLite?"), "waiting", ("is waiting", "→ waiting")
    ),
    "permission": _asks("permission (acceptEdits)", None, _rebuild),
    "manual": _asks("permission (manual)", "default", _rebuild),
    "auto": _asks("permission (auto)", "auto", lambda: reply("Probing.", bash(AUTO_PROBE, "Probe it"))),
    "question": _asks(
        "question", None, lambda: reply("One question.", ask_user_question("Which?", ["Postgres", "SQLite"]))
    ),
    "plan": _asks("plan", "plan", lambda: reply("My plan.", exit_plan_mode("1. Add a flag\n2. Test it"))),
    "error": _ends("error (529)", overloaded, "error", ("API error", "→ error")),
}

WRAPPER = '''"""The bench's pane-only variant: the agent's settings without `hooks`, then the real CLI."""
import json, os, sys
claude, args = sys.argv[1], sys.argv[2:]
if "--settings" in args:
    at = args.index("--settings") + 1
    with open(args[at]) as f:
        settings = json.load(f)
    settings.pop("hooks", None)
    args[at] = args[at].removesuffix(".json") + "-pane-only.json"
    with open(args[at], "w") as f:
        json.dump(settings, f)
os.execv(claude, [claude, *args])
'''


class WallClockFake(FakeTelegram):
    """The fake Bot API, noting the wall-clock time and text of every sendMessage as it arrives."""

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.shown: list[tuple[float, str]] = []
        self.lock = threading.Lock()

    def call(self, method: str, params: Params) -> object:
        if method.lower() == "sendmessage":
            with self.lock:
                self.shown.append((time.time(), params.text("text") or ""))
        return super().call(method, params)


@dataclass
class Rig:
    """A repository, a bus namespace, `ib worker`, the bot, and the agents (path, mode) → id."""

    namespace: str
    work: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="ib-turn-end-")))
    socket: str = field(default_factory=lambda: f"ibbench-{uuid.uuid4().hex[:8]}")
    fake: FakeAnthropic = field(default_factory=FakeAnthropic)
    telegram: WallClockFake = field(default_factory=lambda: WallClockFake(time_scale=SCALE, rates=TELEGRAM))
    agents: dict[tuple[str, str | None], str] = field(default_factory=dict)
    _worker: subprocess.Popen[bytes] | None = None
    _bot: subprocess.Popen[bytes] | None = None

    def start(self, modes: list[str | None]) -> Rig:
        self.fake.start()
        self.telegram.start()
        self.redis = redis.Redis.from_url(REDIS_URL, decode_responses=True)
        self.keys = Keys(self.namespace)
        self.repo = init_repo(self.work / "repo")
        home = write_home(self.work / "home", [self.repo])  # no defaultMode: what a user has
        wrapper = self.work / "pane_only.py"
        wrapper.write_text(WRAPPER, encoding="utf-8")
        self.commands = {
            "hooks": str(claude_binary()),
            "pane": f"{sys.executable} {wrapper} {claude_binary()}",
        }
        self.env = ib_env(
            self.namespace,
            str(self.work / "spool"),
            **client_env(self.fake.base_url, home),
            IB_TMUX_SOCKET=self.socket,
            IB_WORKER_ID=f"bench-{uuid.uuid4().hex[:6]}",
            IB_AGENT_COMMAND=self.commands["hooks"],
            IB_STATUS_NODE_AUTO="false",
        )
        self._worker = subprocess.Popen(
            [IB, "worker"], cwd=self.repo, env=self.env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        self._bot = start_bot(self.telegram, self.namespace, str(self.work))
        for path in PATHS:
            for mode in modes:
                self._spawn(path, mode)
        return self

    def _spawn(self, path: str, mode: str | None) -> None:
        name = f"{path}-{mode or 'accept'}".lower()
        self.fake.script(reply("Ready.\n\nWAITING"))
        chosen = ["--permission-mode", mode] if mode else []
        subprocess.run(
            [IB, "new-agent", "wait for orders", "--name", name, *chosen],
            cwd=self.repo,
            env={**self.env, "IB_AGENT_COMMAND": self.commands[path]},
            check=True,
            capture_output=True,
        )
        self.agents[(path, mode)] = name
        if not self._until(lambda: "Ready." in self.screen(name) and self._idle(name)):
            raise RuntimeError(f"{name} did not finish its first turn; screen:\n{self.screen(name)}")

    def stop(self) -> None:
        if self._bot is not None:
            stop_bot(self._bot)
        if self._worker is not None:
            self._worker.terminate()
            self._worker.wait(timeout=30)
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True, check=False)
        Path(f"/tmp/tmux-{os.getuid()}/{self.socket}").unlink(missing_ok=True)
        self.fake.stop()
        self.telegram.stop()
        for _ in range(10):  # the CLIs, hung up on, may still write their HOME for a moment
            shutil.rmtree(self.work, ignore_errors=True)
            time.sleep(0.3)
            if not self.work.exists():
                break

    def screen(self, agent: str) -> str:
        target = f"={session_name(self.repo, agent)}:"
        done = subprocess.run(
            ["tmux", "-L", self.socket, "capture-pane", "-p", "-t", target],
            capture_output=True,
            text=True,
            check=False,
        )
        return done.stdout

    def keys_to(self, agent: str, *keys: str) -> None:
        target = f"={session_name(self.repo, agent)}:"
        subprocess.run(["tmux", "-L", self.socket, "send-keys", "-t", target, *keys], check=True)

    def _idle(self, agent: str) -> bool:
        screen = self.screen(agent)
        busy = pane_state(screen).value in ("running", "permission", "creating")
        return not busy and read_dialog(screen) is None

    def _until(self, check: Callable[[], bool], limit: float = 60.0) -> bool:
        deadline = time.monotonic() + limit
        while not check():
            if time.monotonic() > deadline:
                return False
            time.sleep(0.05)
        return True

    def measure(self, agent: str, row: Kind) -> tuple[float, float]:
        """One scripted turn for `agent`; seconds from the moment to the event on the bus and to the
        sendMessage (inf when none came within DEADLINE)."""
        self.told = ""  # what told it, for the progress line
        newest = cast(list[tuple[str, dict[str, str]]], self.redis.xrevrange(self.keys.events, count=1))
        last = newest[0][0] if newest else "0-0"
        self.fake.script(row.turn())
        typed = time.time()
        self.keys_to(agent, "-l", "go on")
        self.keys_to(agent, "Enter")
        if not self._until(lambda: any(t > typed for t in self.fake.turn_ends())):
            raise RuntimeError(f"{agent}: the stand-in never answered; screen:\n{self.screen(agent)}")
        moment = next(t for t in self.fake.turn_ends() if t > typed)
        event = self._event(agent, row, last, moment + DEADLINE)
        shown = self._message(agent, row, typed, moment + DEADLINE)
        if not math.isfinite(event - shown):
            with self.telegram.lock:
                texts = [text for at, text in self.telegram.shown if at > typed]
            print(f"{agent}: missed; sent {texts}; screen:\n{self.screen(agent)}", file=sys.stderr)
        self._tidy(agent, row)
        return event - moment, shown - moment

    def _event(self, agent: str, row: Kind, last: str, deadline: float) -> float:
        """Wall-clock time of the first event of `agent` after `last` that tells `row`."""
        while time.time() < deadline:
            block = max(1, min(1000, int((deadline - time.time()) * 1000)))  # redis-py times out at 5 s
            answer = cast(
                list[tuple[str, list[tuple[str, dict[str, str]]]]],
                self.redis.xread({self.keys.events: last}, block=block),
            )
            for _name, entries in answer or []:
                for entry_id, fields in entries:
                    last = entry_id
                    event = json.loads(fields["e"])
                    if event.get("agent") == agent and row.told_by(event):
                        self.told = f"{event.get('type')} {(event.get('data') or {}).get('to_state', '')}"
                        return int(entry_id.split("-")[0]) / 1000
        return math.inf

    def _message(self, agent: str, row: Kind, since: float, deadline: float) -> float:
        while time.time() < deadline:
            with self.telegram.lock:
                sent = list(self.telegram.shown)
            for at, text in sent:
                if at > since and agent in text and any(w in text for w in row.words):
                    self.told += f" / {text[:40]!r}"
                    return at
            time.sleep(0.005)
        return math.inf

    def _tidy(self, agent: str, row: Kind) -> None:
        """Back to idle: a dialog is dismissed (Escape), and the pane watcher has seen it close."""
        for _ in range(10):
            if self._until(lambda: self._idle(agent), limit=1.5 if row.dialog else 10.0):
                break
            self.keys_to(agent, "Escape")
        stored = self.keys.agent(agent)
        self._until(lambda: self.redis.hget(stored, "state") not in ("running", "permission"), 5.0)
        time.sleep(GAP)


Samples = dict[str, dict[str, tuple[list[float], list[float]]]]


def bench(runs: int, rows: list[str]) -> Samples:
    """path → row → (seconds to the bus, seconds to sendMessage) per sample."""
    results: Samples = {p: {r: ([], []) for r in rows} for p in PATHS}
    modes = list(dict.fromkeys(ROWS[r].mode for r in rows))
    with scratch_namespace() as namespace:
        rig = Rig(namespace)
        try:
            rig.start(modes)  # stopped below even when an agent fails to start
            for _ in range(runs):
                for name in rows:
                    for path in PATHS:
                        bus, telegram = rig.measure(rig.agents[(path, ROWS[name].mode)], ROWS[name])
                        print(f"  {name} {path}: bus {bus * 1000:.0f} ms, Telegram {telegram * 1000:.0f} ms"
                              f"  ({rig.told})", file=sys.stderr)  # fmt: skip
                        results[path][name][0].append(bus)
                        results[path][name][1].append(telegram)
        finally:
            rig.stop()
    return results


def _cell(values: list[float]) -> str:
    """p50 / p99 in ms of the samples that came, and how many did not."""
    ms = [v * 1000 for v in values if math.isfinite(v)]
    missed = len(values) - len(ms)
    shown = f"{percentile(ms, 50):5.0f} /{percentile(ms, 99):5.0f}" if ms else "    —  /   — "
    return shown + (f" ({missed} missed)" if missed else "")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="samples per row and path (default 3)")
    parser.add_argument("--rows", default=",".join(ROWS), help=f"some of {','.join(ROWS)} (default: all)")
    args = parser.parse_args()
    rows = [r for r in args.rows.split(",") if r]
    unknown = [r for r in rows if r not in ROWS]
    if unknown or args.runs < 1:
        parser.error(f"unknown row {', '.join(unknown)}; use {', '.join(ROWS)}" if unknown else "--runs ≥ 1")
    load = os.getloadavg()[0]
    results = bench(args.runs, rows)
    print(
        "== moment (the stand-in sent the turn) → event on the bus → sendMessage at the fake Bot API, ms\n"
        f"   Claude Code {CLAUDE_CODE_VERSION}, {args.runs} per row and path, Telegram clock ×{SCALE:g};"
        f" load average {load:.1f} at start, {os.getloadavg()[0]:.1f} at end; goal: p99 ≤ 1000 ms"
    )
    print(f"  {'p50 / p99':<25} {'hooks (default)':<28} pane-only (no hooks)")
    print(f"  {'':<25} {'bus':<14}{'Telegram':<14} {'bus':<14}Telegram")
    for name in rows:
        cells = [_cell(results[p][name][i]) for p in PATHS for i in (0, 1)]
        print(f"  {ROWS[name].label:<25} {cells[0]:<14}{cells[1]:<14} {cells[2]:<14}{cells[3]}".rstrip())


if __name__ == "__main__":
    main()
