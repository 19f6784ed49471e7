"""The scripted pairs of edits the conflict check is measured on (tests/integration/test_conflict_check.py
and bench/conflict_bench.py): a base repository, agents with repositories of their own as `ib new-agent`
makes them, two edits per pair, and what a real `git merge` of both says."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

from bus.connection.clients import client_for
from bus.settings.settings import Settings
from bus.stores.agent_store import Agent
from tests.cli import git, init_repo
from worker.agents.layout import AgentPaths
from worker.git import agent_repo
from worker.git.repo import Git
from worker.runtime import Runtime

CALC = (
    "def add(a, b):\n    return a + b\n\n\n"
    + "".join(f"# filler {i}\n" for i in range(12))
    + ("\n\ndef mul(a, b):\n    return a * b\n")
)
WORKER = "w-conflicts"


def runtime(repo: Path, redis_url: str, namespace: str) -> Runtime:
    return Runtime(
        Settings(redis_url=redis_url, namespace=namespace, worker_id=WORKER), client_for(redis_url), repo
    )


def agent_repo_of(rt: Runtime, repo: Path, agent_id: str) -> Path:
    """An agent with its own repository, as `ib new-agent` makes it; its work tree."""
    paths = AgentPaths(repo, agent_id)
    branch = f"agent/{agent_id}"
    agent_repo.create(Git(repo), agent_repo.AgentRepo(paths.worktree, paths.git_dir, branch), "main")
    rt.agents.save(
        Agent(
            id=agent_id,
            root=str(repo),
            project="proj",
            branch=branch,
            base_branch="main",
            worktree=str(paths.worktree),
            worker=WORKER,
            state="running",
        )
    )
    return paths.worktree


def edit(path: Path, old: str, new: str) -> None:
    path.write_text(path.read_text().replace(old, new, 1))


def commit(worktree: Path) -> None:
    git(worktree, "add", "-A")
    git(worktree, "commit", "-q", "-m", "work")


Edit = Callable[[Path], object]  # an edit of an agent's work tree; what it returns is not used


def _thencommit(edit: Edit) -> Edit:
    """`edit`, then a commit of the whole work tree."""

    def edit_and_commit(worktree: Path) -> None:
        edit(worktree)
        commit(worktree)

    return edit_and_commit


# name → (agent a's edit, agent b's edit); whether they conflict is what a real merge says
PAIRS: dict[str, tuple[Edit, Edit]] = {
    "same-function-same-line": (
        lambda w: edit(w / "calc.py", "return a + b", "return a + b + 0"),
        lambda w: edit(w / "calc.py", "return a + b", "return b + a"),
    ),
    "same-function-one-committed": (
        _thencommit(lambda w: edit(w / "calc.py", "return a + b", "return int(a + b)")),
        lambda w: edit(w / "calc.py", "return a + b", "return float(a + b)"),
    ),
    "different-functions": (
        lambda w: edit(w / "calc.py", "return a + b", "return a + b  # sum"),
        lambda w: edit(w / "calc.py", "return a * b", "return a * b  # product"),
    ),
    "different-files": (
        lambda w: edit(w / "calc.py", "return a + b", "return b + a"),
        lambda w: edit(w / "notes.txt", "two", "three"),
    ),
    "the-same-change-on-both": (
        lambda w: edit(w / "notes.txt", "two", "2"),
        lambda w: edit(w / "notes.txt", "two", "2"),
    ),
    "delete-and-modify": (
        lambda w: (w / "notes.txt").unlink(),
        lambda w: edit(w / "notes.txt", "one", "uno"),
    ),
    "both-add-one-new-file": (
        lambda w: (w / "new.py").write_text("A = 1\n"),
        lambda w: (w / "new.py").write_text("A = 2\n"),
    ),
    "binary-both-changed": (
        lambda w: (w / "logo.bin").write_bytes(b"\x00\x01\x02aaaa"),
        lambda w: (w / "logo.bin").write_bytes(b"\x00\x01\x02bbbb"),
    ),
    "rename-and-edit-elsewhere": (
        lambda w: git(w, "mv", "notes.txt", "list.txt"),
        lambda w: edit(w / "calc.py", "return a * b", "return b * a"),
    ),
}
EXPECTED = {
    "same-function-same-line": ["calc.py"],
    "same-function-one-committed": ["calc.py"],
    "delete-and-modify": ["notes.txt"],
    "both-add-one-new-file": ["new.py"],
    "binary-both-changed": ["logo.bin"],
}


def real_merge_conflicts(a: Path, b: Path, scratch: Path) -> list[str]:
    """What `git merge` says when both agents' work is committed and merged for real, in a throwaway clone."""
    for worktree in (a, b):
        git(worktree, "add", "-A")
        git(worktree, "commit", "-q", "--allow-empty", "-m", "for the real merge")
    git(a.parent.parent, "init", "-q", str(scratch))
    git(scratch, "fetch", "-q", str(a), "HEAD:refs/heads/a")
    git(scratch, "fetch", "-q", str(b), "HEAD:refs/heads/b")
    git(scratch, "checkout", "-q", "a")
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", "merge", "-q", "--no-edit", "b"],
        cwd=scratch,
        capture_output=True,
        check=False,
    )
    if done.returncode == 0:
        return []
    return git(scratch, "diff", "--name-only", "--diff-filter=U").split()


def base_repo(path: Path) -> Path:
    """The person's repository the pairs start from: calc.py, notes.txt and a binary logo.bin on main."""
    root = init_repo(path)
    (root / "calc.py").write_text(CALC)
    (root / "notes.txt").write_text("one\ntwo\n")
    (root / "logo.bin").write_bytes(b"\x00\x01\x02base")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "calc")
    return root
