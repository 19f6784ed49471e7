"""Spawn time per CLI: `ib new-agent --cli X` to the agent's `spawned` event on the bus and to the CLI's
input box on its pane, beside the bare CLI started in a tmux pane without ittybus, from the same run.

    .venv/bin/python -m bench.spawn_bench [--runs N] [--cli claude,codex,gemini]

Each CLI is the pinned real one, offline against its scripted API stand-in (tests/fake_anthropic,
tests/fake_openai, tests/fake_gemini). Per run and CLI, in turn:

- baseline: the bare CLI (a HOME or CODEX_HOME that asks nothing at start, as the tests give it) started
  with `tmux new-session` in the repository, from that call to the first capture (every 25 ms) showing its
  input box (Claude Code `❯` under a rule, Codex `›`, Gemini CLI ` > `);
- the CLI's own `--version`, which `ib new-agent` runs (once per process) to check the pinned release;
- once per run, the import of `ib`'s command-line application in a fresh Python (what `ib new-agent`
  loads before anything else), its wall and CPU (user + system) time;
- ittybus: from the start of the `ib new-agent --cli X` process (with a goal, whose turn the stand-in
  answers at once) to the `spawned` event (its stream id's milliseconds) and to the first capture of the
  agent's pane showing its input box (the goal may already be in it).

The tmux servers (one for the bare CLIs; one per CLI for the agents, started with the environment its
`ib new-agent` has, since an agent's pane takes its variables from the server's) are up before the first
run, kept by a session of their own, so no figure pays a server's start. After each start the session is
killed (`ib kill --force` for the agent).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import cast

import redis

from bench.common import IB, REDIS_URL, ib_env, percentile, process_times, scratch_namespace
from bus.wire.keys import Keys
from tests import fake_anthropic, fake_openai
from tests.cli import init_repo
from tests.fake_anthropic.client import write_home as claude_home
from tests.fake_gemini import client as gemini_client
from tests.fake_gemini.script import reply as gemini_reply
from tests.fake_gemini.server import FakeGemini
from tests.fake_openai import client as codex_client
from worker.agents.layout import session_name
from worker.markers import COMPLETION_MARKER

CLIS = ("claude", "codex", "gemini")
POLL = 0.025  # seconds between captures
DEADLINE = 90.0  # seconds a start may take on two busy cores
WIDTH, HEIGHT = 200, 50  # as ittybus opens an agent's pane
ROWS = (
    ("bare", "bare CLI in a tmux pane → input box (baseline)"),
    ("version", "`CLI --version` (a spawn's version check)"),
    ("spawned", "ib new-agent → spawned event on the bus"),
    ("box", "ib new-agent → input box on the agent's pane"),
)


def _claude_box(screen: str) -> bool:
    lines = screen.splitlines()
    return any(line.startswith("❯") and lines[i - 1].startswith("──") for i, line in enumerate(lines) if i)


def _codex_box(screen: str) -> bool:
    return any(line.startswith("› ") for line in screen.splitlines())


def _gemini_box(screen: str) -> bool:
    return any(line.startswith(" > ") for line in screen.splitlines())


INPUT_BOX: dict[str, Callable[[str], bool]] = {
    "claude": _claude_box,
    "codex": _codex_box,
    "gemini": _gemini_box,
}


@dataclass
class Cli:
    """One CLI: the bare command and its environment (baseline), and the environment `ib new-agent`
    gets for it."""

    name: str
    bare: str
    bare_env: dict[str, str]
    ib_env: dict[str, str]


def _tmux(socket: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["tmux", "-L", socket, *args], capture_output=True, text=True, check=False)


def _until_box(socket: str, target: str, cli: str, limit: float) -> float | None:
    """When the pane `target` first shows the CLI's input box (time.time()), or None."""
    while time.time() < limit:
        if INPUT_BOX[cli](_tmux(socket, "capture-pane", "-p", "-t", target).stdout):
            return time.time()
        time.sleep(POLL)
    return None


def _keep(socket: str, env: dict[str, str]) -> None:
    """Start the tmux server `socket` with `env` as its global environment, kept up by a session."""
    subprocess.run(
        ["tmux", "-L", socket, "new-session", "-d", "-s", "keep", "sleep 86400"], env=env, check=True
    )


def bare_start(socket: str, repo: Path, cli: Cli, run: int) -> float | None:
    """Seconds from `tmux new-session` to the bare CLI's input box."""
    session = f"bare-{cli.name}-{run}"
    words = " ".join(f"{k}={shlex.quote(v)}" for k, v in cli.bare_env.items())
    start = time.time()
    _tmux(socket, "new-session", "-d", "-s", session, "-x", str(WIDTH), "-y", str(HEIGHT), "-c", str(repo),
          f"env {words} {cli.bare}")  # fmt: skip
    shown = _until_box(socket, f"={session}:", cli.name, start + DEADLINE)
    _tmux(socket, "kill-session", "-t", f"={session}")
    return None if shown is None else shown - start


def version_time(cli: Cli) -> float:
    """Seconds `<cli> --version` takes: the version check `ib new-agent` runs before it starts the CLI."""
    start = time.time()
    subprocess.run([*shlex.split(cli.bare)[:1], "--version"], env={**os.environ, **cli.bare_env},
                   capture_output=True, check=False)  # fmt: skip
    return time.time() - start


def app_import_times() -> tuple[float, float]:
    """Wall and CPU seconds a fresh Python takes to import `ib`'s command-line application (what every
    `ib new-agent` loads before it does anything)."""
    walls, cpus = process_times([sys.executable, "-c", "import worker.cli.app"], dict(os.environ), runs=1)
    return walls[0], cpus[0]


def _spawned_at(rds: redis.Redis, keys: Keys, agent: str) -> float | None:
    entries = cast(list[tuple[bytes, dict[bytes, bytes]]], rds.xrange(keys.events))
    for entry_id, fields in entries:
        event = json.loads(fields[b"e"])
        if event.get("type") == "spawned" and event.get("agent") == agent:
            return int(entry_id.decode().split("-")[0]) / 1000
    return None


def ib_start(
    socket: str, repo: Path, cli: Cli, run: int, rds: redis.Redis, keys: Keys
) -> tuple[float | None, float | None]:
    """Seconds from the start of `ib new-agent --cli X` to its `spawned` event and to its input box."""
    agent = f"{cli.name}-{run}"
    start = time.time()
    proc = subprocess.Popen(
        [IB, "new-agent", "say hi", "--name", agent, "--cli", cli.name],
        cwd=repo,
        env=cli.ib_env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    shown = _until_box(socket, f"={session_name(repo, agent)}:", cli.name, start + DEADLINE)
    _out, err = proc.communicate(timeout=DEADLINE)
    if proc.returncode:
        raise RuntimeError(f"ib new-agent --cli {cli.name} failed: {err.decode().strip()}")
    spawned = _spawned_at(rds, keys, agent)
    subprocess.run([IB, "kill", agent, "--force"], cwd=repo, env=cli.ib_env, capture_output=True, check=False)
    return (
        None if spawned is None else spawned - start,
        None if shown is None else shown - start,
    )


def _ms(samples: list[float]) -> str:
    if not samples:
        return "no sample"
    ms = [s * 1000 for s in samples]
    return f"p50 {percentile(ms, 50):6.0f} ms  p99 {percentile(ms, 99):6.0f} ms"


def _load() -> str:
    one, five, _ = os.getloadavg()
    return f"load average {one:.1f} (5 min {five:.1f})"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--cli", default=",".join(CLIS), help="comma-separated, of claude, codex, gemini")
    args = parser.parse_args(argv)
    chosen = [c for c in args.cli.split(",") if c]
    if unknown := [c for c in chosen if c not in CLIS]:
        parser.error(f"unknown CLI {', '.join(unknown)}; choose of {', '.join(CLIS)}")
    run_id = uuid.uuid4().hex[:8]
    bare_socket = f"ibbench-{run_id}-bare"
    sockets = [bare_socket, *(f"ibbench-{run_id}-{name}" for name in chosen)]
    with ExitStack() as stack:
        namespace = stack.enter_context(scratch_namespace())
        work = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="ib-spawn-")))
        claude = stack.enter_context(fake_anthropic.FakeAnthropic())
        codex = stack.enter_context(fake_openai.FakeOpenAI())
        gemini = stack.enter_context(FakeGemini())
        done = f"Hi.\n\n{COMPLETION_MARKER}"
        claude.set_default(fake_anthropic.reply(done))
        codex.set_default(fake_openai.reply(done))
        gemini.set_default(gemini_reply(done))
        for socket in sockets:
            stack.callback(_tmux, socket, "kill-server")
        repo = init_repo(work / "repo")
        base = ib_env(namespace, str(work / "spool"), IB_WORKER_ID=f"w-{uuid.uuid4().hex[:6]}")
        claude_env = fake_anthropic.client_env(claude.base_url, claude_home(work / "claude-home", [repo]))
        codex_tmp = work / "codex-tmp"
        codex_tmp.mkdir()
        codex_bare_home = fake_openai.write_codex_home(work / "codex-bare", codex.base_url, [repo])
        codex_person = fake_openai.write_codex_home(work / "codex-person", codex.base_url, [])
        codex_env = codex_client.client_env(codex_person, codex_tmp, work / "codex-person-home")
        gemini_env = gemini_client.client_env(gemini.base_url, gemini_client.write_home(work / "gemini-home"))
        clis = {
            "claude": Cli(
                "claude",
                str(fake_anthropic.claude_binary()),
                claude_env,
                {**base, **claude_env, "IB_AGENT_COMMAND": str(fake_anthropic.claude_binary())},
            ),
            "codex": Cli(
                "codex",
                shlex.join([str(codex_client.codex_binary()), *codex_client.codex_args()]),
                codex_client.client_env(codex_bare_home, codex_tmp, work / "codex-bare-home"),
                {**base, **codex_env, "IB_AGENT_ENV": codex_client.KEY_VARIABLE},
            ),
            "gemini": Cli(
                "gemini",
                str(gemini_client.gemini_binary()),
                gemini_env,
                {**base, **gemini_env, "IB_MODEL": gemini_client.MODEL},
            ),
        }
        for name in chosen:  # a server per CLI, started with its environment as `ib new-agent` would
            clis[name].ib_env["IB_TMUX_SOCKET"] = f"ibbench-{run_id}-{name}"
        _keep(bare_socket, dict(os.environ))
        for name in chosen:
            _keep(clis[name].ib_env["IB_TMUX_SOCKET"], clis[name].ib_env)
        rds, keys = redis.Redis.from_url(REDIS_URL), Keys(namespace)
        stack.callback(rds.close)
        took = {c: {what: list[float]() for what, _label in ROWS} for c in chosen}
        load_start = _load()
        imports: list[float] = []
        import_cpu: list[float] = []
        for run in range(args.runs):
            wall, cpu = app_import_times()
            imports.append(wall)
            import_cpu.append(cpu)
            for name in chosen:
                cli = clis[name]
                if (bare := bare_start(bare_socket, repo, cli, run)) is not None:
                    took[name]["bare"].append(bare)
                took[name]["version"].append(version_time(cli))
                spawned, box = ib_start(cli.ib_env["IB_TMUX_SOCKET"], repo, cli, run, rds, keys)
                if spawned is not None:
                    took[name]["spawned"].append(spawned)
                if box is not None:
                    took[name]["box"].append(box)
                time.sleep(0.5)  # the killed CLIs' processes go
        print(f"== spawn time, {args.runs} runs per CLI (python -m bench.spawn_bench --runs {args.runs})")
        print(f"   {load_start} at start, {_load()} at end; 2 cores")
        print(f"  python -c 'import worker.cli.app' (ib's own start), wall  {_ms(imports)}  n={len(imports)}")
        print(f"  python -c 'import worker.cli.app' (ib's own start), CPU   {_ms(import_cpu)}")
        for name in chosen:
            print(f"  {name}")
            for what, label in ROWS:
                print(f"    {label:<46} {_ms(took[name][what])}  n={len(took[name][what])}")
    for socket in sockets:
        Path(f"/tmp/tmux-{os.getuid()}/{socket}").unlink(missing_ok=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
