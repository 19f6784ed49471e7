"""The cost of Claude Code's sandbox for an agent's Bash commands: the real CLI (pinned), headless, against
the scripted Messages API, in an agent's worktree, with the settings ittybus writes (sandbox on) and the
same without the sandbox (baseline).

Two figures per mode, each the median of --runs runs:
  loop   one Bash call running a 100-command loop (`for i in $(seq 100); do /bin/true; done`)
  calls  --calls separate Bash calls (`true`): the per-call price (bubblewrap starts once per call)
The time of a call is from the API request that handed the CLI the tool call to the next request,
which carries its result (so it includes the CLI's own work around a call, in both modes).

    .venv/bin/python -m bench.sandbox_bench [--runs 3] [--calls 20]
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import statistics
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path

from tests.cli import git, init_repo
from tests.fake_anthropic import FakeAnthropic, claude_binary, client_env, reply, write_home
from tests.fake_anthropic.script import ToolUse
from worker.programs.claude.sandbox import permission_settings, sandbox_problem, sandbox_settings
from worker.programs.confinement import Confinement

LOOP = "for i in $(seq 100); do /bin/true; done"


def _settings(root: Path, worktree: Path, sandbox: bool) -> dict[str, object]:
    confinement = Confinement(str(worktree), str(root), ["main"], "/usr/local/bin/ib")
    return {
        "permissions": {"allow": ["Bash(true)", f"Bash({LOOP})"], **permission_settings()},
        "sandbox": sandbox_settings(confinement, available=True) if sandbox else {"enabled": False},
    }


def _run(sandbox: bool, commands: list[str]) -> list[float]:
    """Seconds each Bash call took, in order."""
    with tempfile.TemporaryDirectory(prefix="ib-sandbox-bench-") as tmp, FakeAnthropic() as fake:
        root = init_repo(Path(tmp) / "repo")
        worktree = root / ".ib" / "agents" / "bench" / "repo"
        worktree.parent.mkdir(parents=True)
        git(root, "worktree", "add", "-q", str(worktree), "-b", "agent/bench")
        settings = worktree.parent / "settings.json"
        settings.write_text(json.dumps(_settings(root, worktree, sandbox)))
        home = write_home(Path(tmp) / "home", [worktree])
        fake.script(
            *(reply(ToolUse("Bash", {"command": c, "description": "bench"})) for c in commands), reply("done")
        )
        env = {"PATH": os.environ["PATH"], **client_env(fake.base_url, home)}
        done = subprocess.run(
            [str(claude_binary()), "-p", "go", "--settings", str(settings), "--permission-mode", "default"],
            cwd=worktree,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        turns = fake.turns_taken()
        errors = [r for t in turns for r in t.tool_results() if r.get("is_error")]
        if done.returncode != 0 or errors or len(turns) != len(commands) + 1:
            raise SystemExit(f"the bench run failed: {done.stderr[-500:]} {errors[:2]}")
        return [b.at - a.at for a, b in itertools.pairwise(turns)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--calls", type=int, default=20)
    args = parser.parse_args()
    problem = sandbox_problem()
    if problem:
        raise SystemExit(f"no sandbox on this machine: {problem}")
    print(f"Claude Code sandbox cost ({args.runs} runs each, median; {os.cpu_count()} cores)")
    print(f"{'':34}{'no sandbox':>14}{'sandbox':>14}{'cost':>12}")
    rows: dict[str, tuple[list[str], Callable[[list[float]], float]]] = {
        "loop: 1 call, 100 commands": ([LOOP], lambda t: t[0]),
        f"calls: {args.calls} x `true`, per call": (["true"] * args.calls, statistics.median),
    }
    for name, (commands, pick) in rows.items():
        base = statistics.median(pick(_run(False, commands)) for _ in range(args.runs))
        boxed = statistics.median(pick(_run(True, commands)) for _ in range(args.runs))
        print(f"{name:34}{base * 1000:>11.0f} ms{boxed * 1000:>11.0f} ms{(boxed - base) * 1000:>+9.0f} ms")


if __name__ == "__main__":
    main()
