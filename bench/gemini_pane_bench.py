"""Gemini CLI: a turn's end → its event on the bus when only the pane watcher follows the agent, beside the
hook path, from the same run.

    .venv/bin/python -m bench.gemini_pane_bench [--turns N]

One `ib worker` (IB_PANE_INTERVAL 1 s, the default) and two real Gemini CLI 0.61.0 agents (`ib new-agent
--cli gemini`, offline against the scripted Gemini API). One is started as ittybus starts it: its hooks
(`ib hook gemini`) tell the bus. The other finds a wrapper first on PATH as `gemini`, which takes the
`hooks` out of the agent's `~/.gemini/settings.json` before it starts the real CLI, so no hook runs and
only the worker's pane watcher tells. The two agents take turns, one after the other; a turn ends with the
completion marker (`complete`) or without it (`waiting`), by turns, so that the watcher always sees the
state change. Per turn: from the moment the stand-in sent the turn's last chunk to the first event on the
bus that tells the agent's turn ended (a `complete` / `waiting` event, or a `state` event to it; its
stream id's milliseconds). "told by" counts those events by type and sender, so a hook event on the
pane-only path would show.
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
from collections import Counter
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import cast

import redis

from bench.common import IB, REDIS_URL, ib_env, pane_text, percentile, scratch_namespace
from bus.wire.keys import Keys
from tests.cli import init_repo
from tests.fake_gemini.client import MODEL, client_env, gemini_binary
from tests.fake_gemini.script import reply
from tests.fake_gemini.server import FakeGemini
from worker.agents.layout import AgentPaths, session_name
from worker.markers import COMPLETION_MARKER
from worker.programs.gemini.program import pane_state
from worker.tmux.pane_state import PaneState

PATHS = ("hooks", "pane")
KINDS = ("complete", "waiting")
DEADLINE = 90.0  # seconds a turn may take on two busy cores
WRAPPER = """#!{python}
\"\"\"The bench's pane-only Gemini CLI: the agent's settings without `hooks`, then the real CLI. (Pointing
the hooks' IB_REDIS_URL elsewhere would not do: `ib` takes an agent's IB_* from its pane program.)\"\"\"
import json, os, sys
settings = os.path.join(os.environ.get("HOME", ""), ".gemini", "settings.json")
if os.path.exists(settings):
    with open(settings) as f:
        found = json.load(f)
    if found.pop("hooks", None) is not None:
        with open(settings, "w") as f:
            json.dump(found, f)
os.execv({real!r}, [{real!r}, *sys.argv[1:]])
"""


def _events(rds: redis.Redis, keys: Keys, after: str) -> list[tuple[str, dict[str, object]]]:
    entries = cast(list[tuple[bytes, dict[bytes, bytes]]], rds.xrange(keys.events, min=f"({after}"))
    return [(i.decode(), json.loads(f[b"e"])) for i, f in entries]


def _tells(event: dict[str, object], agent: str, kind: str) -> bool:
    if event.get("agent") != agent:
        return False
    data = event.get("data")
    moved = event.get("type") == "state" and isinstance(data, dict) and data.get("to_state") == kind
    return moved or event.get("type") == kind


def _last_id(rds: redis.Redis, keys: Keys) -> str:
    last = cast(list[tuple[bytes, object]], rds.xrevrange(keys.events, count=1))
    return last[0][0].decode() if last else "0-0"


def _ms(samples: list[float]) -> str:
    if not samples:
        return "no sample".ljust(30)
    ms = [s * 1000 for s in samples]
    return (
        f"p50 {percentile(ms, 50):5.0f} / p99 {percentile(ms, 99):5.0f} / min {min(ms):5.0f} ms (n={len(ms)})"
    )


def _load() -> str:
    one, five, _ = os.getloadavg()
    return f"load average {one:.1f} (5 min {five:.1f})"


class Rig:
    """A repository, a bus namespace, `ib worker` and the two agents."""

    def __init__(self, namespace: str, work: Path, fake: FakeGemini) -> None:
        self.work, self.fake = work, fake
        self.socket = f"ibbench-{uuid.uuid4().hex[:8]}"
        self.repo = init_repo(work / "repo")
        (work / "person").mkdir()
        # the wrapper must be in sight inside the agent's box, whose /tmp is its own: the repository is
        bin_dir = self.repo / ".bench-bin"
        bin_dir.mkdir()
        (self.repo / ".git" / "info" / "exclude").write_text(".bench-bin/\n", encoding="utf-8")
        wrapper = bin_dir / "gemini"
        wrapper.write_text(WRAPPER.format(python=sys.executable, real=str(gemini_binary())), encoding="utf-8")
        wrapper.chmod(0o755)
        self.env = ib_env(
            namespace,
            str(work / "spool"),
            IB_TMUX_SOCKET=self.socket,
            IB_MODEL=MODEL,
            IB_WORKER_ID=f"w-{uuid.uuid4().hex[:6]}",
            IB_STATUS_NODE_AUTO="false",
            **client_env(fake.base_url, work / "person"),
        )
        searched = self.env.get("PATH", "/usr/bin:/bin")
        self.envs = {"hooks": self.env, "pane": {**self.env, "PATH": f"{bin_dir}:{searched}"}}
        self.rds, self.keys = redis.Redis.from_url(REDIS_URL), Keys(namespace)
        self.worker: subprocess.Popen[bytes] | None = None
        self.told_by: dict[str, Counter[str]] = {path: Counter() for path in PATHS}

    def start(self) -> None:
        self.worker = subprocess.Popen(
            [IB, "worker"], cwd=self.repo, env=self.env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        for path in PATHS:
            self.fake.script(reply("Ready."))
            env = self.envs[path]
            spawn = [IB, "new-agent", "wait for orders", "--name", path, "--cli", "gemini"]
            subprocess.run(spawn, cwd=self.repo, env=env, check=True, capture_output=True)
            if not self._until(partial(self._idle_after, path, "Ready.")):
                raise RuntimeError(
                    f"the {path} agent did not end its first turn; screen:\n{self.screen(path)}"
                )
        for path in PATHS:  # the wrapper did its work, and only there
            written = AgentPaths(self.repo, path).folder / "home" / ".gemini" / "settings.json"
            if ("hooks" in json.loads(written.read_text(encoding="utf-8"))) != (path != "pane"):
                raise RuntimeError(f"the {path} agent's settings have the wrong hooks: {written}")
        time.sleep(2.0)  # the watcher has read both idle panes

    def stop(self) -> None:
        if self.worker is not None:
            self.worker.terminate()
            self.worker.wait(timeout=30)
        for path in PATHS:
            subprocess.run(
                [IB, "kill", path, "--force"], cwd=self.repo, env=self.env, capture_output=True, check=False
            )
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True, check=False)
        Path(f"/tmp/tmux-{os.getuid()}/{self.socket}").unlink(missing_ok=True)
        self.rds.close()

    def screen(self, agent: str) -> str:
        return pane_text(self.socket, f"={session_name(self.repo, agent)}:")

    def _idle_after(self, agent: str, said: str) -> bool:
        """The agent's pane shows `said` and an idle input box."""
        screen = self.screen(agent)
        return said in screen and pane_state(screen) in (PaneState.COMPLETE, PaneState.WAITING)

    @staticmethod
    def _until(check: Callable[[], bool], limit: float = DEADLINE) -> bool:
        deadline = time.monotonic() + limit
        while time.monotonic() < deadline:
            if check():
                return True
            time.sleep(0.05)
        return False

    def turn(self, agent: str, n: int, kind: str) -> float | None:
        """Seconds from turn `n`'s last chunk sent to the first event telling its end (`kind`)."""
        said = f"Turn {n} done."
        self.fake.script(reply(f"{said}\n{COMPLETION_MARKER}" if kind == "complete" else said))
        ends, after = len(self.fake.turn_ends()), _last_id(self.rds, self.keys)
        subprocess.run(
            [IB, "send", agent, f"turn {n}"], cwd=self.repo, env=self.env, capture_output=True, check=False
        )
        seen: list[float] = []

        def told() -> bool:
            for entry_id, event in _events(self.rds, self.keys, after):
                if _tells(event, agent, kind):
                    seen.append(int(entry_id.split("-")[0]) / 1000)
                    self.told_by[agent][f"{event.get('type')} from {event.get('sender')}"] += 1
                    return True
            return False

        if not self._until(lambda: told() and len(self.fake.turn_ends()) > ends):
            return None
        # the next turn starts from an idle pane the watcher has read
        self._until(partial(self._idle_after, agent, said))
        return seen[0] - self.fake.turn_ends()[ends]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--turns", type=int, default=10, help="turns per agent")
    args = parser.parse_args(argv)
    took: dict[tuple[str, str], list[float]] = {(p, k): [] for p in PATHS for k in KINDS}
    missed = 0
    with (
        scratch_namespace() as namespace,
        tempfile.TemporaryDirectory(prefix="ib-gem-pane-") as work,
        FakeGemini() as fake,
    ):
        rig = Rig(namespace, Path(work), fake)
        try:
            rig.start()
            load_start = _load()
            for n in range(args.turns):
                kind = KINDS[n % 2]
                for path in PATHS:
                    if (seconds := rig.turn(path, n, kind)) is None:
                        missed += 1
                    else:
                        took[(path, kind)].append(seconds)
            load_end = _load()
        finally:
            rig.stop()
    print(
        f"== real Gemini CLI 0.61.0: a turn's last chunk sent → its event on the bus "
        f"(python -m bench.gemini_pane_bench --turns {args.turns})"
    )
    print(f"   {load_start} at start, {load_end} at end; 2 cores; IB_PANE_INTERVAL=1 (default)")
    heads = {"hooks": "hook path (as ittybus starts it)", "pane": "pane-only path (no hooks)"}
    print(f"  {'':<9}" + "".join(f" {heads[p]:<45}" for p in PATHS))
    for kind in KINDS:
        print(f"  {kind:<9}" + "".join(f" {_ms(took[(p, kind)]):<45}" for p in PATHS))
    for path in PATHS:
        print(f"  {path} told by: {', '.join(f'{k} ×{n}' for k, n in sorted(rig.told_by[path].items()))}")
    if missed:
        print(f"  ({missed} turns told nothing within {DEADLINE:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
