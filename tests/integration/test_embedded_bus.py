"""The embedded default: no IB_REDIS_URL → one private redis-server per repository, shared by all `ib`."""

from __future__ import annotations

import json
import os
import socket
import stat
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import redis

from bus.connection.embedded import Embedded
from tests.cli import IbRunner


@pytest.fixture
def local(repo: Path, tmp_path: Path) -> Iterator[IbRunner]:
    runner = IbRunner(repo, {"IB_SPOOL_DIR": str(tmp_path / "spool")})
    yield runner  # each test makes its bus with `ib bus start`: no other command starts one (issue 34)
    Embedded(str(repo)).stop()


def test_processes_of_one_repository_meet_on_one_bus(local: IbRunner, repo: Path) -> None:
    assert local.run("bus", "start").returncode == 0
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
    # Valkey (like Redis >= 7) keeps its append-only file as a base and increments in a folder
    assert list((repo / ".ib" / "redis" / "appendonlydir").glob("*.incr.aof"))


def test_stop_means_stopped_until_start_and_data_survives(local: IbRunner, repo: Path) -> None:
    assert local.run("bus", "start").returncode == 0
    assert local.run("notify", "kept").returncode == 0
    status = local.run("bus", "status")
    assert status.returncode == 0 and "embedded, redis://***@127.0.0.1:" in status.stdout
    assert local.run("bus", "stop").stdout.strip() == "stopped"
    stopped = local.run("bus", "status")
    assert stopped.returncode == 3 and "stopped (ib bus start starts it)" in stopped.stdout
    assert local.run("bus", "stop").stdout.strip() == "not running"

    spooled = local.run("notify", "while stopped")  # a hook or notify does not start it again: it spools
    assert spooled.returncode == 0 and "ib bus stop" in spooled.stderr
    listen = local.run("listen", "--timeout", "1")
    assert listen.returncode == 1 and listen.stderr.count("\n") == 1 and "ib bus start" in listen.stderr

    assert local.run("bus", "start").returncode == 0
    out = local.run("listen", "--timeout", "5").stdout  # from the AOF, then the spool, in order
    assert [json.loads(line)["msg"] for line in out.splitlines()] == ["kept", "while stopped"]


def test_a_restarted_bus_listens_where_it_did(local: IbRunner, repo: Path) -> None:
    """Workers and agents were given the URL when they started: after `ib bus stop` and `ib bus start`
    the same URL reaches the bus again."""
    assert local.run("bus", "start").returncode == 0
    assert local.run("notify", "x").returncode == 0
    url = (repo / ".ib" / "redis" / "url").read_text().strip()
    held = redis.Redis.from_url(url)  # what a running worker holds
    assert held.ping()
    assert local.run("bus", "stop").returncode == 0
    with pytest.raises(redis.ConnectionError):
        held.ping()
    assert local.run("bus", "start").returncode == 0
    assert (repo / ".ib" / "redis" / "url").read_text().strip() == url
    assert held.ping()


def test_a_restarted_bus_whose_port_was_taken_moves(local: IbRunner, repo: Path) -> None:
    assert local.run("bus", "start").returncode == 0
    assert local.run("notify", "x").returncode == 0
    old = urlsplit((repo / ".ib" / "redis" / "url").read_text().strip())
    assert local.run("bus", "stop").returncode == 0
    with socket.socket() as squatter:
        squatter.bind(("127.0.0.1", old.port or 0))
        squatter.listen()
        assert local.run("bus", "start").returncode == 0
        new = urlsplit((repo / ".ib" / "redis" / "url").read_text().strip())
    assert new.port != old.port and new.password != old.password
    assert local.run("notify", "y").returncode == 0


def test_the_worker_shows_the_bus_without_its_password(local: IbRunner, repo: Path) -> None:
    assert local.run("bus", "start").returncode == 0
    assert local.run("notify", "x").returncode == 0
    password = urlsplit((repo / ".ib" / "redis" / "url").read_text().strip()).password
    assert password
    worker = local.popen("worker", env={"IB_TMUX_SOCKET": f"ibtest-{os.getpid()}-banner"})
    try:
        assert worker.stdout is not None
        banner = worker.stdout.readline()
    finally:
        worker.terminate()
        worker.wait(timeout=30)
    assert "running on redis://***@127.0.0.1:" in banner and password not in banner
    assert password not in local.run("bus", "status").stdout


def test_the_embedded_bus_is_locked(local: IbRunner, repo: Path) -> None:
    assert local.run("bus", "start").returncode == 0
    assert local.run("notify", "x").returncode == 0
    state, folder = repo / ".ib", repo / ".ib" / "redis"
    assert stat.S_IMODE(state.stat().st_mode) == 0o700
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    files = [p for p in folder.rglob("*") if p.is_file()]
    assert {"redis.conf", "url", "redis.pid", "redis.log"} <= {p.name for p in files}
    assert {p.name: oct(stat.S_IMODE(p.stat().st_mode)) for p in files} == {p.name: "0o600" for p in files}

    url = (folder / "url").read_text().strip()
    parts = urlsplit(url)
    assert parts.hostname == "127.0.0.1" and parts.password and parts.port
    anonymous = redis.Redis(host="127.0.0.1", port=parts.port)
    with pytest.raises(redis.AuthenticationError):
        anonymous.ping()
    client = redis.Redis.from_url(url)
    assert client.ping()
    for command in (
        ("CONFIG", "SET", "dir", "/tmp"),
        ("DEBUG", "SLEEP", "0"),
        ("MODULE", "LIST"),
        ("SHUTDOWN",),
    ):
        with pytest.raises(redis.ResponseError, match="unknown command"):
            client.execute_command(*command)
    assert client.ping()


def test_an_open_state_folder_from_an_older_version_is_closed(local: IbRunner, repo: Path) -> None:
    (repo / ".ib").mkdir(mode=0o755)
    os.chmod(repo / ".ib", 0o755)
    assert local.run("bus", "start").returncode == 0
    assert stat.S_IMODE((repo / ".ib").stat().st_mode) == 0o700


def test_with_redis_url_nothing_is_started(ib: IbRunner, repo: Path) -> None:
    assert ib.run("notify", "x").returncode == 0
    assert not (repo / ".ib" / "redis").exists()
    refused = ib.run("bus", "stop")
    assert refused.returncode == 1 and "IB_REDIS_URL is set" in refused.stderr


def test_outside_a_repository_without_url_says_so(tmp_path: Path) -> None:
    """No bus can ever exist there, so nothing is spooled (issue 10): one line, exit 1."""
    outside = tmp_path / "plain"
    outside.mkdir()
    runner = IbRunner(outside, {"IB_SPOOL_DIR": str(tmp_path / "spool")})
    done = runner.run("notify", "nowhere to go")
    assert done.returncode == 1
    assert done.stderr.count("\n") == 1 and "not inside a git repository" in done.stderr
    assert not (tmp_path / "spool").exists()
    listen = runner.run("listen", "--timeout", "1")
    assert listen.returncode == 1
    assert listen.stderr.startswith("ib listen: error:") and "IB_REDIS_URL" in listen.stderr
    spawn = runner.run("new-agent", "a goal")
    assert spawn.returncode == 1 and spawn.stderr.count("\n") == 1
    assert "cd into your project" in spawn.stderr
