"""The resources of `ib mcp` through a real MCP client session: the agents list, an agent's screen and a
project's task graph read what `ib list`, `ib look` and `ib task tree` show, and a refusal is a resource
error with the CLI's line."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from bus.connection.embedded import free_port
from tests.cli import IbRunner
from tests.mcp_client import McpClient, served
from tests.waiting import retry_until

TIMEOUT = 30.0
URIS = [
    "ittybus://agents",
    "ittybus://agents/{agent}/screen",
    "ittybus://projects/{project}/tasks",
    "ittybus://tasks",
]


@pytest.fixture
def client(agents_ib: IbRunner, tmp_path: Path) -> Iterator[McpClient]:
    with served(agents_ib, tmp_path) as session:
        yield session


def _cli_error(ib: IbRunner, *args: str) -> str:
    said = ib.run(*args)
    assert said.returncode != 0
    return said.stderr.strip().split(": error: ", 1)[1]


def test_the_agents_and_their_screens(client: McpClient, agents_ib: IbRunner) -> None:
    assert client.resource_uris() == URIS
    assert json.loads(client.read("ittybus://agents")) == {"agents": []}
    client.ok("spawn", goal="Hello.\nfake: say hello from the shed\nfake: wait", name="shed", role="worker")
    listed = json.loads(client.read("ittybus://agents"))["agents"]
    assert [a["id"] for a in listed] == ["shed"] and listed[0]["role"] == "worker"
    retry_until(lambda: "hello from the shed" in client.read("ittybus://agents/shed/screen"), TIMEOUT)
    assert client.read_error("ittybus://agents/ghost/screen") == _cli_error(agents_ib, "look", "ghost")


def test_the_task_graph(client: McpClient, agents_ib: IbRunner) -> None:
    client.ok("task_add", title="Design it", task_id="design")
    client.ok("task_add", title="Build it", task_id="build", after=["design"])
    client.ok("task_add", title="Paint it", task_id="paint", project="shed")
    graph = json.loads(client.read("ittybus://tasks"))
    assert {t["id"]: (t["status"], t["after"]) for t in graph["tasks"]} == {
        "design": ("ready", []),
        "build": ("pending", ["design"]),
    }
    assert graph["tree"] == agents_ib.run("task", "tree").stdout.splitlines()
    shed = json.loads(client.read("ittybus://projects/shed/tasks"))
    assert [t["id"] for t in shed["tasks"]] == ["paint"]
    bad = client.read_error("ittybus://projects/Bad%20Name/tasks")
    assert bad == _cli_error(agents_ib, "task", "tree", "--project", "Bad Name")


def test_an_unknown_resource_and_the_bus_down_are_errors(agents_ib: IbRunner, tmp_path: Path) -> None:
    agents_ib.env["IB_REDIS_URL"] = f"redis://127.0.0.1:{free_port()}/0"  # nothing listens there
    with served(agents_ib, tmp_path) as client:
        assert "ittybus://nothing" in client.read_error("ittybus://nothing")
        assert client.read_error("ittybus://agents") == _cli_error(agents_ib, "list")
        assert client.resource_uris() == URIS
