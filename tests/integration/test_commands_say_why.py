"""Commands that used to say nothing (issue 25, point 3): `ib diff` on an agent with no commits, or with no
worktree or branch left; `ib auto` on a project with no tasks (a typo); `ib info --json`. Real worker,
git, tmux and Redis; fake agents."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from bus.wire.keys import Keys
from tests.cli import IbRunner, git
from tests.waiting import retry_until


@pytest.fixture
def worker(agents_ib: IbRunner, rds: redis.Redis, keys: Keys) -> Iterator[None]:
    proc = agents_ib.popen("worker")
    try:
        retry_until(lambda: rds.exists(keys.worker(agents_ib.env["IB_WORKER_ID"])), 60, what="the worker")
        yield
    finally:
        proc.terminate()
        proc.communicate(timeout=30)


def _said(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_diff_says_why_it_is_empty(agents_ib: IbRunner, repo: Path) -> None:
    ib = agents_ib
    spawned = ib.run(
        "new-agent", "fake: write a.txt one\nfake: write b.txt two\nfake: wait Look", "--name", "dirty"
    )
    assert spawned.returncode == 0, spawned.stderr
    line = "dirty: no commits yet; 2 file(s) changed — `ib status dirty`\n"
    retry_until(lambda: ib.run("diff", "dirty").stdout == line, timeout=40, what="the agent's two files")
    assert _said(ib.run("diff", "dirty", "--stat")) == line
    for part in ("repo", "git"):  # its work tree and its own repository: nothing left but its record
        shutil.rmtree(repo / ".ib" / "agents" / "dirty" / part)
    gone = "dirty: no commits; its worktree is gone, so no uncommitted changes either\n"
    assert _said(ib.run("diff", "dirty")) == gone
    git(repo, "branch", "-D", "agent/dirty")
    assert (
        _said(ib.run("diff", "dirty"))
        == "dirty: nothing to diff: its branch agent/dirty and worktree are gone\n"
    )


def test_auto_refuses_a_project_without_tasks_naming_the_known(agents_ib: IbRunner, worker: None) -> None:
    ib = agents_ib
    none_yet = ib.run("auto", "--project", "backend", "--detach")
    assert none_yet.returncode == 1
    assert none_yet.stderr.strip() == (
        "ib auto: error: project 'backend' has no tasks, and no project has any: add one with `ib task add`"
    )
    for project in ("backend", "frontend"):
        added = ib.run("task", "add", "Something", "--project", project, "--body", "fake: done")
        assert added.returncode == 0, added.stderr
    typo = ib.run("auto", "--project", "bakend")
    assert typo.returncode == 1
    assert typo.stderr.strip() == (
        "ib auto: error: project 'bakend' has no tasks; projects with tasks: backend, frontend "
        "(see `ib task list`)"
    )
    elsewhere = ib.run("task", "list", "--project", "bakend")
    assert elsewhere.stdout == "no tasks in project 'bakend'; 2 in other projects (ib task list --all)\n"
    status = ib.run("auto", "status", "--project", "bakend")
    assert "running" not in status.stdout and "finished" not in status.stdout, status.stdout


def test_info_json_names_the_socket_and_the_attach_command(agents_ib: IbRunner, tmux_socket: str) -> None:
    ib = agents_ib
    assert ib.run("new-agent", "fake: wait Here", "--name", "seen").returncode == 0
    record = json.loads(_said(ib.run("info", "seen", "--json")))
    assert record["id"] == "seen" and record["branch"] == "agent/seen"
    assert record["tmux_socket"] == tmux_socket
    assert record["attach"] == f"tmux -L {tmux_socket} attach -t {record['session']}"
    assert record["state"] in ("creating", "running", "waiting")
