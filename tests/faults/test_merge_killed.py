"""The worker's whole process group killed (SIGKILL) at each step of a merge into the person's checkout
(issue 34): afterwards the checkout is never in a git merge (no MERGE_HEAD), and the next worker, at its
start, clears the locks its killed git left, finishes or undoes the merge, and says which in the request's
result event; the checkout ends clean, merged, with the person's own edits kept.

The steps are real pause points of git itself, no seam in ittybus: a `reference-transaction` hook holds the
branch's lock before the move (`prepared`) or runs just after it (`committed`), and a smudge filter holds the
index's lock while `git restore` writes the merged files. Each step runs IB_FAULT_MERGE_RUNS times (the
issue's 10 for a fault run; 2 by default, as each run spawns an agent and the suite must stay fast)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from collections import Counter
from pathlib import Path
from typing import Any, cast

import pytest
import redis

from bus.commands.worker_commands import QueueMerge
from bus.commands.worker_rpc import submit
from bus.wire.keys import Keys
from tests.cli import IB, IbRunner, git
from tests.faults.tally import Tally
from tests.waiting import retry_until

RUNS = int(os.environ.get("IB_FAULT_MERGE_RUNS", "2"))

STEPS = {
    "ref-locked": "finished or undone",  # killed holding refs/heads/main.lock, main not moved yet
    "ref-moved": "finished",  # main moved, the checkout's files not brought yet
    "files-half": "finished",  # killed holding index.lock, some merged files written
}

HOOK = """#!/bin/sh
grep -q " refs/heads/main$" || exit 0
if [ "$1" = prepared ] && [ -e {pause}/ref-locked ]; then touch {pause}/reached; sleep 600; fi
if [ "$1" = committed ] && [ -e {pause}/ref-moved ]; then touch {pause}/reached; sleep 600; fi
exit 0
"""

SMUDGE = """#!/bin/sh
if [ -e {pause}/files-half ] && [ "$(pwd -P)" = "{repo}" ]; then touch {pause}/reached; sleep 600; fi
exec cat
"""


def _prepare(repo: Path, pause: Path) -> None:
    """The pause points, and the person's own work that must survive: an edit of a file the agents leave
    alone, and an untracked note."""
    pause.mkdir()
    hook = repo / ".git" / "hooks" / "reference-transaction"
    hook.write_text(HOOK.format(pause=pause))
    hook.chmod(0o755)
    smudge = pause.parent / "smudge.sh"
    smudge.write_text(SMUDGE.format(pause=pause, repo=repo.resolve()))
    smudge.chmod(0o755)
    git(repo, "config", "filter.slow.smudge", str(smudge))
    (repo / ".gitattributes").write_text("*.slow filter=slow\n")
    (repo / "person.txt").write_text("committed\n")
    git(repo, "add", ".gitattributes", "person.txt")
    git(repo, "commit", "-q", "-m", "a filter for the test")
    (repo / "person.txt").write_text("the person's unstaged edit\n")
    (repo / "notes.txt").write_text("the person's untracked notes\n")


def _agent_ready(ib: IbRunner, name: str, run: int) -> None:
    done = ib.run(
        "new-agent",
        "\n".join(
            [
                f"Work as {name}.",
                f"fake: write a{run}.txt first of run {run}",
                f"fake: write z{run}.slow last of run {run}",
                f"fake: write README.md readme of run {run}",
                f"fake: commit run {run}",
                "fake: done",
            ]
        ),
        "--name",
        name,
        "--project",
        "shop",
    )
    assert done.returncode == 0, done.stderr

    def complete() -> bool:
        ib.run("worker", "--once")
        states = {r["id"]: r["state"] for r in json.loads(ib.run("list", "--json").stdout)}
        return states.get(name) == "complete"

    retry_until(complete, timeout=60, interval=0.3, what=f"{name} to complete")


def _killed_mid_merge(ib: IbRunner, rds: redis.Redis, keys: Keys, name: str, pause: Path, step: str) -> None:
    (pause / step).touch()
    submit(rds, keys, ib.env["IB_WORKER_ID"], QueueMerge(agent=name))
    worker = subprocess.Popen(
        [IB, "worker", "--once"],
        cwd=ib.cwd,
        env=ib.environ({"IB_WARM": "0"}),  # in this process group, as the `ib worker` service: not served
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,  # its own process group: the worker, its git and the hook's sleep
    )
    try:
        retry_until((pause / "reached").exists, timeout=90, what=f"the merge to reach {step}")
    finally:
        os.killpg(worker.pid, signal.SIGKILL)
        worker.wait(timeout=30)
    (pause / step).unlink()
    (pause / "reached").unlink()


def _merge_events(rds: redis.Redis, keys: Keys, agent: str) -> list[dict[str, Any]]:
    entries = cast(list[tuple[str, dict[str, str]]], rds.xrange(keys.events))
    found = [json.loads(f["e"]) for _i, f in entries]
    return [e for e in found if e["type"].startswith("merge_") and e.get("agent") == agent]


def _locks(repo: Path) -> list[str]:
    names = ("index.lock", "HEAD.lock", "refs/heads/main.lock", "MERGE_HEAD")
    return [name for name in names if (repo / ".git" / name).exists()]


@pytest.mark.timeout(150 * RUNS)  # each run spawns an agent and runs the worker twice
@pytest.mark.parametrize("step", list(STEPS))
def test_the_worker_killed_at_a_step_of_a_merge_leaves_the_checkout_whole(
    agents_ib: IbRunner, repo: Path, rds: redis.Redis, keys: Keys, tmp_path: Path, tally: Tally, step: str
) -> None:
    ib = agents_ib
    pause = tmp_path / "pause"
    _prepare(repo, pause)
    merged, said = [], []
    for run in range(RUNS):
        name = f"m{run}"
        _agent_ready(ib, name, run)
        old = git(repo, "rev-parse", "main").strip()
        _killed_mid_merge(ib, rds, keys, name, pause, step)
        assert not (repo / ".git" / "MERGE_HEAD").exists()  # never a git merge in the person's checkout

        again = ib.run("worker", "--once", timeout=120)
        assert again.returncode == 0, again.stderr
        done = _merge_events(rds, keys, name)[-1]
        assert done["type"] == "merge_merged", done
        recovered = done["data"].get("recovered", "")
        assert any(f"was {word}" in recovered for word in STEPS[step].split(" or ")), done
        said.append(recovered.split(" was ")[1].split(":")[0])
        merged.append(name)

        assert _locks(repo) == []
        assert git(repo, "status", "--porcelain") == " M person.txt\n?? notes.txt\n"
        parents = git(repo, "rev-list", "--parents", "-n", "1", "main").split()[1:]
        assert len(parents) == 2 and parents[0] == old
        assert (repo / f"a{run}.txt").read_text() == f"first of run {run}\n"
        assert (repo / f"z{run}.slow").read_text() == f"last of run {run}\n"
        assert (repo / "README.md").read_text() == f"readme of run {run}\n"
        assert (repo / "person.txt").read_text() == "the person's unstaged edit\n"
    note = ", ".join(f"{n}× {word}" for word, n in Counter(said).items()) + "; checkout clean, no lock left"
    row = tally.count(f"worker killed mid-merge ({step})", [f"m{r}" for r in range(RUNS)], merged, note=note)
    assert (row.lost, row.twice) == (0, 0)
