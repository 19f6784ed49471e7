"""The embedded default: no IB_REDIS_URL → one private redis-server per repository, shared by all `ib`."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from bus.embedded import Embedded
from tests.cli import IbRunner


@pytest.fixture
def local(repo: Path, tmp_path: Path) -> Iterator[IbRunner]:
    runner = IbRunner(repo, {"IB_SPOOL_DIR": str(tmp_path / "spool")})
    yield runner
    Embedded(str(repo)).stop()


def test_processes_of_one_repository_meet_on_one_bus(local: IbRunner, repo: Path) -> None:
    worktree = repo / ".ib" / "agents" / "agent-e1" / "repo"
    worktree.mkdir(parents=True)
    assert local.run("notify", "from the root").returncode == 0
    assert local.run("notify", "--type", "waiting", "from a worktree", cwd=worktree).returncode == 0
    out = local.run("listen", "--timeout", "5", cwd=repo / ".ib").stdout
    got = [json.loads(line) for line in out.splitlines()]
    assert [(e["from"], e["msg"]) for e in got] == [
        ("unknown", "from the root"),
        ("agent-e1", "from a worktree"),
    ]
    assert (repo / ".ib" / "redis" / "appendonly.aof").exists()


def test_status_stop_and_data_survives_restart(local: IbRunner, repo: Path) -> None:
    assert local.run("notify", "kept").returncode == 0
    status = local.run("bus", "status")
    assert status.returncode == 0 and "embedded, redis://127.0.0.1:" in status.stdout
    assert local.run("bus", "stop").stdout.strip() == "stopped"
    stopped = local.run("bus", "status")
    assert stopped.returncode == 3 and "not running" in stopped.stdout
    assert local.run("bus", "stop").stdout.strip() == "not running"
    out = local.run("listen", "--timeout", "5").stdout  # starts it again, from the AOF
    assert [json.loads(line)["msg"] for line in out.splitlines()] == ["kept"]


def test_with_redis_url_nothing_is_started(ib: IbRunner, repo: Path) -> None:
    assert ib.run("notify", "x").returncode == 0
    assert not (repo / ".ib" / "redis").exists()
    refused = ib.run("bus", "stop")
    assert refused.returncode == 1 and "IB_REDIS_URL is set" in refused.stderr


def test_outside_a_repository_without_url_spools(tmp_path: Path) -> None:
    outside = tmp_path / "plain"
    outside.mkdir()
    runner = IbRunner(outside, {"IB_SPOOL_DIR": str(tmp_path / "spool")})
    done = runner.run("notify", "nowhere to go")
    assert done.returncode == 0
    assert "not inside a git repository" in done.stderr
    listen = runner.run("listen", "--timeout", "1")
    assert listen.returncode == 1
    assert listen.stderr.startswith("ib listen: error:") and "IB_REDIS_URL" in listen.stderr
