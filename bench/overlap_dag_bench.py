"""The task queue over a DAG with deliberate overlaps: merge conflicts reached with the overlap check on
(IB_OVERLAP=hold) and off (ignore), on a real Redis and real git.

    .venv/bin/python -m bench.overlap_dag_bench          # IB_BENCH_CLAIMERS=3

Ten tasks in a project whose files hold small functions; several pairs change the same line of the same
function, some wait for others (`after`), each declares the files it changes (`touches`). IB_BENCH_CLAIMERS
agents work in rounds: each idle agent claims the next task through bus.tasks.task_holds (as `ib task claim`
and /auto do), starts a branch from the target's tip at that moment, makes the task's edit and commits; at the
end of the round every finished task goes into the merge queue (bus.tasks.merges, in its merge order) and is
merged with a real `git merge`. A conflict is counted, aborted, and the task is done again on top of the
target (as a merge agent would) before the next request. Printed per mode: merge conflicts reached, rounds
taken (what holding costs in parallelism) and, with hold, how many ready tasks waited per round (summed).
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import redis

from bench.common import REDIS_URL, scratch_namespace
from bus.tasks.merges import MergeStore
from bus.tasks.task_holds import OverlapClaims
from bus.tasks.task_store import TaskStore
from bus.wire.keys import Keys
from tests.cli import git, init_repo
from worker.git.repo import Git

CLAIMERS = int(os.environ.get("IB_BENCH_CLAIMERS", "3"))
P = "dag"
FILES = {
    "src/sums.py": ["def add(a, b):", "    return a + b", "", "def sub(a, b):", "    return a - b"],
    "src/products.py": ["def mul(a, b):", "    return a * b", "", "def div(a, b):", "    return a / b"],
    "src/shapes.py": ["def area(w, h):", "    return w * h"],
    "docs/guide.md": ["# Guide", "", "Sums: add and sub.", "", "Products: mul and div."],
    "tests/test_sums.py": ["def test_add():", "    pass"],
    "tests/test_products.py": ["def test_mul():", "    pass"],
}


@dataclass(frozen=True)
class DagTask:
    """A task of the DAG: the files it declares, what it waits for, and its edit (file, line, new text)."""

    id: str
    touches: tuple[str, ...]
    edits: tuple[tuple[str, int, str], ...]
    after: tuple[str, ...] = ()


DAG = (
    DagTask("fix-add", ("src/sums.py",), (("src/sums.py", 1, "    return int(a) + int(b)"),)),
    DagTask("add-floats", ("src/sums.py",), (("src/sums.py", 1, "    return float(a) + float(b)"),)),
    DagTask("fix-mul", ("src/products.py",), (("src/products.py", 1, "    return int(a) * int(b)"),)),
    DagTask("mul-floats", ("src/products.py",), (("src/products.py", 1, "    return float(a * b)"),)),
    DagTask("test-add", ("tests/test_sums.py",), (("tests/test_sums.py", 1, "    assert add(1, 2) == 3"),)),
    DagTask("area", ("src/shapes.py",), (("src/shapes.py", 1, "    return abs(w * h)"),)),
    DagTask(
        "docs-sums",
        ("docs/guide.md",),
        (("docs/guide.md", 2, "Sums: add and sub, on integers."),),
        after=("fix-add",),
    ),
    DagTask(
        "docs-all",
        ("docs/guide.md",),
        (("docs/guide.md", 2, "Sums and products, for numbers."),),
        after=("fix-mul",),
    ),
    DagTask(
        "sub-checks",
        ("src/sums.py",),
        (("src/sums.py", 1, "    return check(a) + check(b)"), ("src/sums.py", 4, "    return check(a - b)")),
        after=("area",),
    ),
    DagTask(
        "test-mul", ("tests/test_products.py",), (("tests/test_products.py", 1, "    assert mul(2, 3) == 6"),)
    ),
)


@dataclass
class Outcome:
    mode: str
    conflicts: list[str] = field(default_factory=list)
    rounds: int = 0
    held: int = 0  # ready tasks left waiting for an overlapping one, summed over the rounds
    merged: int = 0


def _write(root: Path, path: str, lines: list[str]) -> None:
    target = root / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("\n".join(lines) + "\n")


def base_repo(path: Path) -> Path:
    repo = init_repo(path)
    for name, lines in FILES.items():
        _write(repo, name, lines)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "the project")
    return repo


def _work(repo: Path, task: DagTask, base: str, folder: Path) -> str:
    """Do `task` on a branch of its own started at `base` (a worktree of its own); its branch name."""
    branch = f"agent/{task.id}"
    if folder.exists():
        git(repo, "worktree", "remove", "--force", str(folder))
    git(repo, "worktree", "add", "-q", "-B", branch, str(folder), base)
    for path, line, text in task.edits:
        lines = (folder / path).read_text().splitlines()
        lines[line] = text
        _write(folder, path, lines)
    git(folder, "commit", "-q", "-am", task.id)
    return branch


def _merge(repo: Path, branch: str) -> bool:
    done = subprocess.run(
        ["git", "merge", "-q", "--no-ff", "--no-edit", branch], cwd=repo, capture_output=True, check=False
    )
    if done.returncode != 0:
        git(repo, "merge", "--abort")
    return done.returncode == 0


def run_dag(mode: str, claimers: int, client: redis.Redis, keys: Keys, repo: Path) -> Outcome:
    """The DAG through the task queue with `claimers` agents, IB_OVERLAP=`mode`; what it reached."""
    tasks = TaskStore(client, keys, events_maxlen=100_000)
    merges = MergeStore(client, keys, 100_000)
    claims = OverlapClaims(tasks, merges, mode)
    by_id = {t.id: t for t in DAG}
    for t in DAG:
        tasks.add(t.id, project=P, task_id=t.id, touches=t.touches, after=t.after)
    outcome = Outcome(mode)
    agents = [f"agent-{n}" for n in range(claimers)]
    while outcome.merged < len(DAG):
        outcome.rounds += 1
        working = []
        for agent in agents:
            claimed = claims.claim(P, agent)
            if claimed is None:
                break
            working.append((agent, by_id[claimed.id], git(repo, "rev-parse", "main").strip()))
        outcome.held += len(claims.holds(P)) if mode == "hold" else 0
        for agent, task, base in working:
            branch = _work(repo, task, base, repo.parent / "work" / agent)
            change = Git(repo).change_size("main", branch)
            tasks.done(task.id, agent)
            merges.enqueue(
                project=P,
                agent=agent,
                branch=branch,
                target="main",
                worker="bench",
                task=task.id,
                size=change.lines,
                changed=change.files,
            )
        while (head := merges.head(P)) is not None:
            req = head.request
            if not _merge(repo, req.branch):
                outcome.conflicts.append(req.task)
                redo = _work(repo, by_id[req.task], "main", repo.parent / "work" / req.agent)
                assert _merge(repo, redo), f"{req.task} does not merge even on top of main"
            merges.finish(req.replace(status="merged"))
            outcome.merged += 1
        if not working and outcome.merged < len(DAG):
            raise RuntimeError(f"{mode}: nothing claimable with {len(DAG) - outcome.merged} tasks left")
    return outcome


def main() -> None:
    client = redis.Redis.from_url(REDIS_URL, decode_responses=True)
    print(f"{len(DAG)} tasks, {CLAIMERS} agents claiming in rounds, real git merges")
    for mode in ("ignore", "hold"):
        with tempfile.TemporaryDirectory() as folder, scratch_namespace() as namespace:
            repo = base_repo(Path(folder) / "repo")
            got = run_dag(mode, CLAIMERS, client, Keys(namespace), repo)
        label = (
            "check off (IB_OVERLAP=ignore, baseline)" if mode == "ignore" else "check on (IB_OVERLAP=hold)"
        )
        print(
            f"  {label}: {len(got.conflicts)} merge conflicts reached"
            + (f" ({', '.join(got.conflicts)})" if got.conflicts else "")
            + f", {got.rounds} rounds"
            + (f", {got.held} task-rounds held" if mode == "hold" else "")
        )
    client.close()


if __name__ == "__main__":
    main()
