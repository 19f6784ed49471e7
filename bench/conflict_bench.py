"""Conflict prediction: how soon after an agent's edit its `conflict_risk` event is on the bus, with 10 (and
50) live agents, beside the git calls it is made of, all in the same run; and the prediction's false
positives / negatives on the scripted edit pairs of tests/conflict_pairs.py (the integration test's), each
checked against a real `git merge`.

  edit → event   an agent's file is changed, then `ib hook changes` is started as Claude Code starts it
                 (a fresh process with the PostToolUse payload on stdin): the clock starts at its spawn and
                 stops when a blocking XREAD sees the `conflict_risk` event the worker's conflict watch
                 (worker.conflicts.watch, in this process, on the real Redis) published. Every other agent
                 has a change of its own to another file; one of them edits the same function.
  hook alone     the same hook process, spawn to exit (what the agent waits for), beside `ib hook
                 pre-tool-use` (the hook every tool call already runs; it never reaches Redis)
  snapshot       one agent's work as a commit (copy the index, `git add -A`, write-tree, commit-tree)
  merge-tree     the bare `git merge-tree --write-tree` of two commits: the baseline of one comparison

The person's repository is a clone of this checkout (about its real size), each agent a repository of its own
as `ib new-agent` makes it.

    .venv/bin/python -m bench.conflict_bench [--agents 10,50] [--samples 20] [--skip-pairs]
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
from bus.stores.agent_store import Agent
from bus.wire.keys import Keys
from tests.cli import git
from tests.conflict_pairs import PAIRS, agent_repo_of, base_repo, real_merge_conflicts, runtime
from tests.streams import newest_entry
from worker.agents.layout import AgentPaths
from worker.conflicts.check import ConflictCheck
from worker.conflicts.snapshot import Scratch
from worker.conflicts.watch import ConflictWatch
from worker.git import agent_repo
from worker.git.repo import Git
from worker.runtime import Runtime

CHECKOUT = Path(__file__).resolve().parent.parent
WORKER = "w-bench"
CALC = "def add(a, b):\n    return a + b\n\n\n" + "# filler\n" * 12 + "\n\ndef mul(a, b):\n    return a * b\n"
DEADLINE = 30.0


def _person_repo(folder: Path) -> Path:
    subprocess.run(["git", "clone", "-q", "--no-hardlinks", str(CHECKOUT), str(folder)], check=True)
    git(folder, "checkout", "-q", "-B", "main")
    git(folder, "config", "user.email", "bench@example.com")
    git(folder, "config", "user.name", "bench")
    (folder / "calc.py").write_text(CALC)
    git(folder, "add", "calc.py")
    git(folder, "commit", "-q", "-m", "calc")
    return folder


def _agents(rt: Runtime, repo: Path, count: int) -> list[Path]:
    worktrees = []
    for n in range(count):
        agent_id = f"a{n:02d}"
        paths = AgentPaths(repo, agent_id)
        branch = f"agent/{agent_id}"
        agent_repo.create(Git(repo), agent_repo.AgentRepo(paths.worktree, paths.git_dir, branch), "main")
        rt.agents.save(
            Agent(id=agent_id, root=str(repo), project="bench", branch=branch, base_branch="main",
                  worktree=str(paths.worktree), worker=WORKER, state="running")
        )  # fmt: skip
        (paths.worktree / f"own-{agent_id}.txt").write_text(f"{agent_id}'s own work\n")
        worktrees.append(paths.worktree)
    calc = worktrees[1] / "calc.py"
    calc.write_text(calc.read_text().replace("return a + b", "return b + a"))  # a01: the same function
    return worktrees


def edit_to_event(repo: Path, count: int, samples: int) -> tuple[list[float], list[float]]:
    """(edit → event seconds, hook process seconds) per sample, with `count` live agents."""
    with scratch_namespace() as ns, tempfile.TemporaryDirectory() as spool:
        settings = Settings(redis_url=REDIS_URL, namespace=ns, worker_id=WORKER)
        rt = Runtime(settings, client_for(REDIS_URL), repo)
        keys = Keys(ns)
        worktrees = _agents(rt, repo, count)
        stopping = threading.Event()
        ConflictWatch(rt, client_for(REDIS_URL, blocking=True), stopping).start()
        reader = redis.Redis.from_url(REDIS_URL, decode_responses=True)
        env = ib_env(ns, spool, IB_AGENT_ID="a00", IB_WORKER_ID=WORKER, IB_ROOT=str(repo))
        payload = json.dumps(
            {"hook_event_name": "PostToolUse", "tool_name": "Edit", "tool_input": {}}
        ).encode()
        latencies, hooks = [], []
        try:
            for n in range(samples + 1):  # the first round warms up (scratch repository, caches)
                calc = worktrees[0] / "calc.py"
                calc.write_text(CALC.replace("return a + b", f"return a + b + {n}"))
                last = newest_entry(reader, keys.events)
                since = last[0] if last else "0-0"
                start = time.perf_counter()
                proc = subprocess.Popen([IB, "hook", "changes"], env=env, stdin=subprocess.PIPE,
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
                assert proc.stdin is not None
                proc.stdin.write(payload)
                proc.stdin.close()
                proc.wait()
                hook = time.perf_counter() - start
                seen = _wait_event(reader, keys, since)
                if n:
                    latencies.append(seen - start)
                    hooks.append(hook)
        finally:
            stopping.set()
        return latencies, hooks


def _wait_event(reader: redis.Redis, keys: Keys, since: str) -> float:
    deadline = time.monotonic() + DEADLINE
    while time.monotonic() < deadline:
        # a decoding client: XREAD's reply is a list of (stream, entries), each entry as
        # bus.events.streams types it
        answer = cast(list[tuple[str, list[Entry]]] | None, reader.xread({keys.events: since}, block=1000))
        for _stream, entries in answer or []:
            for entry_id, fields in entries:
                since = entry_id
                if json.loads(fields["e"])["type"] == "conflict_risk":
                    return time.perf_counter()
    raise TimeoutError("no conflict_risk event within the deadline")


def other_hook(repo: Path, samples: int) -> list[float]:
    """Seconds of `ib hook pre-tool-use` (spawn to exit) on an Edit in an agent's work tree."""
    worktree = AgentPaths(repo, "a00").worktree
    payload = {
        "tool_name": "Edit",
        "tool_input": {"file_path": str(worktree / "calc.py")},
        "cwd": str(worktree),
    }
    env = ib_env("ibbench:none:", "/nonexistent", IB_AGENT_ID="a00", IB_ROOT=str(repo))
    walls, _cpus = process_times([IB, "hook", "pre-tool-use"], env, json.dumps(payload).encode(), samples)
    return walls


def git_baselines(repo: Path, samples: int) -> tuple[list[float], list[float]]:
    """(snapshot seconds, bare merge-tree seconds) of agents a00 and a01 (made by edit_to_event)."""
    scratch = Scratch(repo)
    snaps, merges = [], []
    a, b = AgentPaths(repo, "a00"), AgentPaths(repo, "a01")
    ours = scratch.snapshot("a00", a.worktree, a.git_dir)
    theirs = scratch.snapshot("a01", b.worktree, b.git_dir)
    for _ in range(samples):
        start = time.perf_counter()
        scratch.snapshot("a00", a.worktree, a.git_dir)
        snaps.append(time.perf_counter() - start)
        start = time.perf_counter()
        subprocess.run(
            [
                "git",
                "--git-dir",
                str(scratch.git_dir),
                "merge-tree",
                "--write-tree",
                ours.commit,
                theirs.commit,
            ],
            capture_output=True,
            check=False,
        )
        merges.append(time.perf_counter() - start)
    return snaps, merges


def scripted_pairs() -> tuple[int, int, int]:
    """(pairs, false positives, false negatives) on the scripted set (tests/conflict_pairs.py, which the
    integration test checks too), each against a real merge."""
    false_pos = false_neg = 0
    for name, (edit_a, edit_b) in PAIRS.items():
        with tempfile.TemporaryDirectory() as folder, scratch_namespace() as ns:
            root = Path(folder)
            repo = base_repo(root / "repo")
            rt = runtime(repo, REDIS_URL, ns)
            a, b = agent_repo_of(rt, repo, "ann"), agent_repo_of(rt, repo, "bob")
            edit_a(a)
            edit_b(b)
            told = ConflictCheck(rt).run(["bob"])
            predicted = {f.shown for c in told if c.against == "agent" for f in c.files}
            real = set(real_merge_conflicts(a, b, root / "truth"))
            false_pos += len(predicted - real)
            false_neg += len(real - predicted)
            print(f"  {name}: predicted {sorted(predicted)} real {sorted(real)}")
    return len(PAIRS), false_pos, false_neg


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", default="10", help="comma-separated counts of live agents")
    parser.add_argument("--samples", type=int, default=20)
    parser.add_argument("--skip-pairs", action="store_true")
    args = parser.parse_args()
    for count in [int(c) for c in args.agents.split(",")]:
        with tempfile.TemporaryDirectory() as folder:
            repo = _person_repo(Path(folder) / "repo")
            files = len(git(repo, "ls-files").splitlines())
            latencies, hooks = edit_to_event(repo, count, args.samples)
            snaps, merges = git_baselines(repo, args.samples)
            pre_tool_use = other_hook(repo, args.samples)
            print(f"{count} live agents, {files} files in the repository:")
            print(f"  edit → conflict_risk  {summary_ms(latencies)}")
            print(f"  hook alone           {summary_ms(hooks)}")
            print(f"  pre-tool-use hook    {summary_ms(pre_tool_use)}")
            print(f"  one snapshot         {summary_ms(snaps)}")
            print(f"  bare git merge-tree  {summary_ms(merges)}")
    if not args.skip_pairs:
        pairs, false_pos, false_neg = scripted_pairs()
        print(f"scripted pairs: {pairs}, false positives {false_pos}, false negatives {false_neg}")


if __name__ == "__main__":
    main()
