"""An agent id from elsewhere given to an `ib mcp` tool: one of another project (another repository, its
own bus namespace) and one of another machine (its worker gone, or never seen on this bus). Each is a tool
error with the line `ib` prints for the same command, and the other project's agent is left as it was."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis

from bus.stores.agent_store import Agent, AgentStore
from bus.wire.keys import Keys
from tests.cli import IbRunner, init_repo
from tests.mcp_client import McpClient, served

FIVE_DAYS_MS = 5 * 86_400_000
CALLS = [
    ("look", {}, ("look",)),
    ("approve", {}, ("approve",)),
    ("kill", {"force": True}, ("kill", "--force")),
]


@pytest.fixture
def client(agents_ib: IbRunner, tmp_path: Path) -> Iterator[McpClient]:
    with served(agents_ib, tmp_path) as session:
        yield session


@pytest.fixture
def neighbour(agents_ib: IbRunner, rds: redis.Redis, tmp_path: Path) -> Iterator[IbRunner]:
    """`ib` of another repository on the same Redis and tmux server, with its own namespace (scrubbed)."""
    namespace = f"ibtest:{uuid.uuid4().hex[:10]}:"
    env = {**agents_ib.env, "IB_NAMESPACE": namespace, "IB_SPOOL_DIR": str(tmp_path / "neighbour-spool")}
    yield IbRunner(init_repo(tmp_path / "neighbour"), env)
    for key in rds.scan_iter(match=f"{namespace}*", count=1000):
        rds.delete(key)


def _cli_line(ib: IbRunner, *args: str) -> str:
    said = ib.run(*args)
    assert said.returncode != 0, said.stdout
    return said.stderr.strip().split(": error: ", 1)[1]


def _far_agent(rds: redis.Redis, keys: Keys, agent: str, worker: str) -> None:
    AgentStore(rds, keys).save(Agent(id=agent, session=f"ib-{agent}", worker=worker, goal="far away"))


@pytest.mark.parametrize(("tool", "extra", "cli"), CALLS, ids=[c[0] for c in CALLS])
def test_an_agent_of_another_project_is_not_found(
    client: McpClient,
    agents_ib: IbRunner,
    neighbour: IbRunner,
    tool: str,
    extra: dict[str, Any],
    cli: tuple[str, ...],
) -> None:
    spawned = neighbour.run("new-agent", "fake: wait", "--name", "theirs")
    assert spawned.returncode == 0, spawned.stderr
    line = _cli_line(agents_ib, *cli, "theirs")
    assert line == "no agent 'theirs' (see `ib list`)"
    assert client.error(tool, agent="theirs", **extra) == line
    listed = neighbour.run("list")
    assert "theirs" in listed.stdout and "killed" not in listed.stdout, listed.stdout


@pytest.mark.parametrize(("tool", "extra", "cli"), CALLS, ids=[c[0] for c in CALLS])
def test_an_agent_of_a_machine_whose_worker_is_gone(
    client: McpClient,
    agents_ib: IbRunner,
    rds: redis.Redis,
    keys: Keys,
    tool: str,
    extra: dict[str, Any],
    cli: tuple[str, ...],
) -> None:
    now_ms = int(time.time() * 1000)
    rds.hset(keys.worker_seen, "w-far", now_ms - FIVE_DAYS_MS)  # as its last heartbeat left it
    _far_agent(rds, keys, "remote", "w-far")
    line = _cli_line(agents_ib, *cli, "remote")
    assert line.startswith("worker 'w-far' is gone (its heartbeat expired): last seen 5 days ago"), line
    assert client.error(tool, agent="remote", **extra) == line
    assert AgentStore(rds, keys).get("remote").goal == "far away"


@pytest.mark.parametrize(("tool", "extra", "cli"), CALLS, ids=[c[0] for c in CALLS])
def test_an_agent_of_a_machine_never_seen_on_this_bus(
    client: McpClient,
    agents_ib: IbRunner,
    rds: redis.Redis,
    keys: Keys,
    tool: str,
    extra: dict[str, Any],
    cli: tuple[str, ...],
) -> None:
    _far_agent(rds, keys, "stray", "w-nowhere")
    line = _cli_line(agents_ib, *cli, "stray")
    assert line.startswith("no worker 'w-nowhere' has run on this bus"), line
    assert client.error(tool, agent="stray", **extra) == line
