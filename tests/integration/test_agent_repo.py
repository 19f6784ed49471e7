"""An agent's own repository against real git, tmux and Redis (fake agents): it borrows the person's objects
and copies nothing back by itself; its branch reaches the person's repository when the worker needs it; a
worker's branch merged into its manager's lands in the manager's own repository; bad input is refused."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli import IbRunner, git
from tests.waiting import retry_until
from worker.errors import GitError
from worker.git import agent_repo
from worker.git.agent_repo import AgentRepo
from worker.git.repo import Git


def spawn(ib: IbRunner, name: str, *lines: str, extra: tuple[str, ...] = ()) -> None:
    done = ib.run("new-agent", "\n".join([f"Work as {name}.", *lines]), "--name", name, *extra)
    assert done.returncode == 0, done.stderr


def wait_complete(ib: IbRunner, *names: str) -> None:
    def ready() -> bool:
        ib.run("worker", "--once")
        states = {r["id"]: r["state"] for r in json.loads(ib.run("list", "--json").stdout)}
        return all(states.get(n) == "complete" for n in names)

    retry_until(ready, timeout=40, interval=0.3, what=f"{names} to complete")


def test_an_agent_commits_in_its_own_repository_and_the_worker_brings_the_branch(
    agents_ib: IbRunner, repo: Path
) -> None:
    ib = agents_ib
    spawn(ib, "solo", "fake: write s.txt solo", "fake: commit solo work", "fake: done")
    folder = repo / ".ib" / "agents" / "solo"
    own = folder / "git"
    assert git(folder / "repo", "rev-parse", "--absolute-git-dir").strip() == str(own)
    assert (own / "objects" / "info" / "alternates").read_text().strip() == str(repo / ".git" / "objects")
    assert git(folder / "repo", "config", "user.name").strip() == "Test"  # the person's identity
    assert not (repo / ".git" / "worktrees").exists()
    base = git(repo, "rev-parse", "main").strip()
    assert git(repo, "rev-parse", "agent/solo").strip() == base  # listed in the person's repository at once
    wait_complete(ib, "solo")
    assert git(repo, "rev-parse", "agent/solo").strip() == base  # the commit stayed in the agent's repository
    diff = ib.run("diff", "solo", "--stat")
    assert diff.returncode == 0 and "s.txt" in diff.stdout, diff.stderr
    assert git(repo, "log", "-1", "--format=%s", "agent/solo").strip() == "solo work"
    done = ib.run("merge", "solo")
    assert done.returncode == 0, done.stderr
    assert (repo / "s.txt").is_file() and not folder.exists()
    assert git(repo, "fsck", "--no-dangling") == ""


def test_a_worker_merged_into_its_manager_lands_in_the_manager_s_repository(
    agents_ib: IbRunner, repo: Path
) -> None:
    ib = agents_ib
    spawn(ib, "boss", "fake: write b.txt boss", "fake: commit boss work", "fake: done")
    wait_complete(ib, "boss")
    spawn(
        ib,
        "helper",
        "fake: write h.txt helper",
        "fake: commit helper work",
        "fake: done",
        extra=("--manager", "boss", "--worker"),
    )
    wait_complete(ib, "helper")
    helper = repo / ".ib" / "agents" / "helper" / "repo"
    assert (helper / "b.txt").is_file()  # a worker starts from its manager's branch as it is now
    done = ib.run("merge", "helper")
    assert done.returncode == 0, done.stderr
    boss = repo / ".ib" / "agents" / "boss" / "repo"
    assert (boss / "h.txt").read_text().strip() == "helper"  # in the manager's own checkout
    assert git(boss, "log", "-1", "--format=%s").strip().startswith("Merge agent/helper")
    assert git(repo, "show", "agent/boss:h.txt").strip() == "helper"  # and its copy in the person's
    assert not (repo / "h.txt").exists() and git(repo, "status", "--porcelain") == ""


def test_bad_branch_names_and_a_missing_base_are_refused(repo: Path, tmp_path: Path) -> None:
    root = Git(repo)
    cases = [("agent/..bad", "main", "cannot be a branch name"), ("agent/x", "nowhere", "is not a commit")]
    for branch, base, says in cases:
        folder = tmp_path / branch.replace("/", "-")
        try:
            agent_repo.create(root, AgentRepo(folder / "repo", folder / "git", branch), base)
        except GitError as e:
            assert says in str(e)
        else:
            raise AssertionError(f"{branch} from {base} was accepted")
        assert not folder.exists()
