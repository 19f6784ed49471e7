"""Lock files of a killed git of ours are cleared; the lock of a git that still runs, or one older than the
merge, never is (worker/git/stale_locks.py, worker/git/landing.py)."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest

from tests.cli import git
from worker.errors import GitError
from worker.git import landing, stale_locks
from worker.git.repo import Git


def _live_git(repo: Path) -> subprocess.Popen[bytes]:
    """A git of the person's that runs in the repository until its stdin closes; returned once it answered
    a question (before, under load, the child may not have become git yet: nothing to find)."""
    person = subprocess.Popen(
        ["git", "cat-file", "--batch-check"], cwd=repo, stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    assert person.stdin is not None and person.stdout is not None
    person.stdin.write(b"HEAD\n")
    person.stdin.flush()
    assert person.stdout.readline()  # `<id> commit <size>`, or `HEAD missing` in a repository with no commit
    return person


def test_a_lock_is_kept_while_a_git_runs_in_the_repository_and_cleared_after(repo: Path) -> None:
    since = time.time()
    lock = repo / ".git" / "index.lock"
    lock.write_text("")
    person = _live_git(repo)
    try:
        removed, running = stale_locks.clear([lock], since, [repo], [repo / ".ib"])
        assert removed == [] and [g.pid for g in running] == [person.pid]
        assert lock.exists()
    finally:
        assert person.stdin is not None
        person.stdin.close()
        person.wait(timeout=30)
    removed, running = stale_locks.clear([lock], since, [repo], [repo / ".ib"])
    assert removed == [lock] and running == [] and not lock.exists()


def test_a_lock_older_than_the_merge_is_not_ours(repo: Path) -> None:
    lock = repo / ".git" / "HEAD.lock"
    lock.write_text("")
    removed, running = stale_locks.clear([lock], time.time() + 60, [repo], [repo / ".ib"])
    assert (removed, running) == ([], []) and lock.exists()


def test_an_agents_git_under_ib_does_not_hold_the_persons_locks(repo: Path) -> None:
    below = repo / ".ib" / "agents" / "a1"
    below.mkdir(parents=True)
    git(below, "init", "-q")
    agent = _live_git(below)
    try:
        assert stale_locks.live_gits([repo], [repo / ".ib"]) == []
        assert [g.pid for g in stale_locks.live_gits([repo], [])] == [agent.pid]
    finally:
        assert agent.stdin is not None
        agent.stdin.close()
        agent.wait(timeout=30)


def test_recovery_waits_for_a_live_git_and_keeps_its_journal(repo: Path) -> None:
    g = Git(repo)
    old = git(repo, "rev-parse", "main").strip()
    journal = landing.Journal("main", "agent/a1", old, old, str(repo))
    path = landing.git_path(g, repo, landing.JOURNAL)
    path.write_text(journal.to_json())
    lock = repo / ".git" / "index.lock"
    lock.write_text("")
    person = _live_git(repo)
    try:
        with pytest.raises(GitError, match="works in"):
            landing.recover(g, repo)
        assert lock.exists() and path.exists()
    finally:
        assert person.stdin is not None
        person.stdin.close()
        person.wait(timeout=30)
    done = landing.recover(g, repo)
    assert done is not None and done.outcome == "undone"
    assert not lock.exists() and not path.exists()
    assert "was undone" in done.line
