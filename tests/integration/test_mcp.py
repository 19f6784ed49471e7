"""`ib mcp` through a real MCP client session over stdio, against a real Redis and the fake agent: the
tools drive an agent from spawn to merge, `wait_for_events` hands over every event once by its cursor,
and bad input comes back as a tool error with the CLI's line while the server stays up."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
import redis

from bus.connection.embedded import free_port
from bus.wire.keys import Keys
from tests.cli import IB, IbRunner, git
from tests.mcp_client import McpClient, mcp_client, served, text
from tests.redis_server import RedisServer
from tests.waiting import retry_until

TIMEOUT = 30.0
TOOLS = [
    "agent_info", "answer", "approve", "attention", "auto_start", "auto_status", "cost", "deny", "diff",
    "kill", "limits", "list_agents", "look", "merge", "resume", "review_comment", "send", "spawn",
    "task_add", "task_done", "task_list", "task_show", "wait_for_events",
]  # fmt: skip


@pytest.fixture
def client(agents_ib: IbRunner, tmp_path: Path) -> Iterator[McpClient]:
    with served(agents_ib, tmp_path) as session:
        yield session


def _until(client: McpClient, cursor: str, kind: str, agent: str) -> tuple[list[dict[str, Any]], str]:
    """Every event of `agent` after `cursor` up to the first of type `kind`, and the cursor after it."""
    seen: list[dict[str, Any]] = []
    while not any(e["type"] == kind for e in seen):
        got = client.ok("wait_for_events", cursor=cursor, agents=[agent], timeout=TIMEOUT)
        assert got["events"], f"no {kind} event for {agent}; saw {[e['type'] for e in seen]}"
        seen, cursor = seen + got["events"], got["cursor"]
    return seen, cursor


@pytest.mark.timeout(180)
def test_the_tools_take_an_agent_from_spawn_through_its_dialog_to_merge(
    client: McpClient, agents_ib: IbRunner, repo: Path
) -> None:
    assert client.tool_names() == TOOLS
    assert client.ok("list_agents") == {"agents": []}
    start = client.ok("wait_for_events", timeout=0)
    assert start["events"] == []

    steps = ["Make it.", "fake: permission touch made.txt", "fake: write shed.txt painted"]
    spawned = client.ok("spawn", goal="\n".join([*steps, "fake: commit paint", "fake: done"]), name="maker")
    assert spawned["agent"] == "maker"
    assert [a["id"] for a in client.ok("list_agents")["agents"]] == ["maker"]
    assert client.ok("agent_info", agent="maker")["id"] == "maker"

    seen, cursor = _until(client, start["cursor"], "permission", "maker")
    retry_until(lambda: "Do you want to proceed?" in client.ok("look", agent="maker")["screen"], TIMEOUT)
    approved = client.call("approve", agent="maker")
    assert text(approved) == "approved a permission dialog (Do you want to proceed?) of maker: Yes"
    more, cursor = _until(client, cursor, "complete", "maker")
    again = client.ok("wait_for_events", cursor=start["cursor"], agents=["maker"], timeout=0)
    assert again["events"] == (seen + more)[: len(again["events"])]  # the same cursor: the same events
    assert [e["id"] for e in seen + more] == sorted({e["id"] for e in seen + more})  # none twice

    assert "shed.txt" in client.ok("diff", agent="maker", stat=True)["diff"]
    merged = client.ok("merge", agent="maker")
    assert merged["agent"] == "maker" and merged["target"] == "main"
    assert (repo / "shed.txt").read_text() == "painted\n"
    assert "paint" in git(repo, "log", "--oneline", "main")
    assert client.ok("list_agents") == {"agents": []}


def test_tasks_attention_send_and_kill(client: McpClient, agents_ib: IbRunner) -> None:
    added = client.ok("task_add", title="Paint the shed", body="blue", priority=8)["task"]
    assert (added["id"], added["status"], added["priority"]) == ("paint-the-shed", "ready", 8)
    assert [t["id"] for t in client.ok("task_list")["tasks"]] == ["paint-the-shed"]
    assert client.ok("task_show", task="paint-the-shed")["body"] == "blue"
    assert client.ok("attention") == {"items": []}

    client.ok("spawn", goal="fake: wait", name="idle", role="worker")
    retry_until(lambda: "idle" in agents_ib.run("list").stdout, TIMEOUT)
    assert client.ok("send", agent="idle", text="hello there")["done"] == "sent to idle"
    assert client.ok("kill", agent="idle", force=True) == {"agent": "idle", "killed": True}
    assert client.ok("list_agents") == {"agents": []}


@pytest.mark.parametrize(
    ("tool", "arguments", "cli"),
    [
        ("kill", {"agent": "ghost"}, ("kill", "ghost")),
        ("look", {"agent": "ghost"}, ("look", "ghost")),
        ("task_show", {"task": "nope"}, ("task", "show", "nope")),
        ("cost", {"agent": "ghost"}, ("cost", "ghost")),
        ("task_add", {"title": "x", "priority": 11}, ("task", "add", "x", "--priority", "11")),
        ("spawn", {"goal": "x", "name": "Bad Name"}, ("new-agent", "x", "--name", "Bad Name")),
    ],
    ids=["kill-ghost", "look-ghost", "task-show-missing", "cost-ghost", "priority-11", "bad-agent-name"],
)
def test_a_refusal_is_a_tool_error_with_the_clis_line(
    client: McpClient, agents_ib: IbRunner, tool: str, arguments: dict[str, Any], cli: tuple[str, ...]
) -> None:
    said = agents_ib.run(*cli)
    assert said.returncode != 0
    line = said.stderr.strip().split(": error: ", 1)[1]
    assert client.error(tool, **arguments) == line


@pytest.mark.parametrize(
    ("tool", "arguments", "says"),
    [
        ("no_such_tool", {}, "Unknown tool: no_such_tool"),
        ("look", {}, "agent"),
        ("look", {"agent": "a", "lines": "many"}, "lines"),
        ("wait_for_events", {"types": "complete", "timeout": "soon"}, "timeout"),
        ("wait_for_events", {"cursor": "abc"}, "bad cursor: 'abc' is not a stream id"),
        ("wait_for_events", {"cursor": "99999999999999-0"}, "it is ahead of the events stream"),
        ("wait_for_events", {"timeout": 3600}, "timeout 3600 is out of range"),
        ("wait_for_events", {"timeout": -1}, "timeout -1 is out of range"),
    ],
    ids=["unknown", "missing", "wrong-type", "wrong-type-timeout", "cursor-not-an-id", "forged-cursor",
         "an-hour", "negative"],
)  # fmt: skip
def test_bad_input_is_a_tool_error_and_the_server_stays_up(
    client: McpClient, tool: str, arguments: dict[str, Any], says: str
) -> None:
    error = client.error(tool, **arguments)
    assert says in error and "Traceback" not in error
    if not error.startswith("Error executing tool"):  # not the SDK's schema error: ittybus's one line
        assert "\n" not in error
    assert client.ok("list_agents") == {"agents": []}


def test_a_stale_cursor_says_events_were_trimmed(
    client: McpClient, agents_ib: IbRunner, rds: redis.Redis, keys: Keys
) -> None:
    first = client.ok("wait_for_events", timeout=0)["cursor"]
    for n in range(3):
        assert agents_ib.run("notify", "--from", "someone", f"turn {n}").returncode == 0
    got = client.ok("wait_for_events", cursor=first, types=["complete"], timeout=0)
    assert [e["msg"] for e in got["events"]] == ["turn 0", "turn 1", "turn 2"] and not got["missed"]
    rds.xtrim(keys.events, maxlen=1, approximate=False)  # as IB_EVENTS_MAXLEN does to a stream that grew
    stale = client.ok("wait_for_events", cursor=first, types=["complete"], timeout=0)
    assert [e["msg"] for e in stale["events"]] == ["turn 2"] and stale["missed"]


def test_fifty_calls_at_once_each_get_their_own_answer(client: McpClient, agents_ib: IbRunner) -> None:
    missing = agents_ib.run("task", "show", "missing").stderr.strip().split(": error: ", 1)[1]
    for n in range(10):
        client.ok("task_add", title=f"Task {n}", task_id=f"t{n}")

    async def together() -> dict[int, Any]:
        answers: dict[int, Any] = {}

        async def one(n: int) -> None:
            calls: list[tuple[str, dict[str, Any]]] = [
                ("task_show", {"task": f"t{n % 10}"}),
                ("wait_for_events", {"timeout": 1}),
                ("list_agents", {}),
                ("task_show", {"task": "missing"}),
                ("look", {"agent": 7}),
            ]
            tool, arguments = calls[n % 5]
            answers[n] = await client.session.call_tool(tool, arguments)

        async with anyio.create_task_group() as group:
            for n in range(50):
                group.start_soon(one, n)
        return answers

    answers = client.portal.call(together)
    assert sorted(answers) == list(range(50))
    for n, result in answers.items():
        kind = n % 5
        assert result.is_error is (kind >= 3), (n, text(result))
        if kind == 0:
            assert result.structured_content is not None and result.structured_content["id"] == f"t{n % 10}"
        elif kind == 1:
            assert result.structured_content is not None and result.structured_content["events"] == []
        elif kind == 3:
            assert text(result) == missing
        else:
            assert "agent" in text(result) and "Traceback" not in text(result)  # the SDK's schema error
    assert client.ok("list_agents") == {"agents": []}


def test_a_timeout_of_0_answers_at_once_with_what_is_there(client: McpClient, agents_ib: IbRunner) -> None:
    first = client.ok("wait_for_events", timeout=0)
    assert first["events"] == [] and not first["missed"]
    for n in range(2):
        assert agents_ib.run("notify", "--from", "someone", f"turn {n}").returncode == 0
    got = client.ok("wait_for_events", cursor=first["cursor"], types=["complete"], timeout=0)
    assert [e["msg"] for e in got["events"]] == ["turn 0", "turn 1"]
    after = client.ok("wait_for_events", cursor=got["cursor"], types=["complete"], timeout=0)
    assert after == {"events": [], "cursor": got["cursor"], "missed": False}


def test_the_bus_down_is_a_tool_error_and_the_server_stays_up(agents_ib: IbRunner, tmp_path: Path) -> None:
    agents_ib.env["IB_REDIS_URL"] = f"redis://127.0.0.1:{free_port()}/0"  # nothing listens there
    tasks, agents = (
        agents_ib.run(*cli).stderr.strip().split(": error: ", 1)[1] for cli in (["task", "list"], ["list"])
    )
    assert agents.startswith("the bus is down")  # and which agents still run in tmux
    with (tmp_path / "mcp.err").open("w") as errlog, mcp_client(agents_ib, errlog) as client:
        assert client.error("task_list") == tasks
        assert client.error("list_agents") == agents
        assert client.error("wait_for_events", timeout=1) == tasks
        assert len(client.tool_names()) == len(TOOLS)


def test_the_server_outlives_the_bus_going_down_and_coming_back(agents_ib: IbRunner, tmp_path: Path) -> None:
    bus = RedisServer(tmp_path / "bus")
    agents_ib.env["IB_REDIS_URL"] = bus.url  # nobody listens there yet
    with served(agents_ib, tmp_path) as client:
        assert client.error("task_list").startswith(f"cannot reach Redis at 127.0.0.1:{bus.port}")
        bus.start()
        try:
            assert client.ok("task_add", title="Paint the shed")["task"]["id"] == "paint-the-shed"
            assert client.ok("wait_for_events", timeout=0)["events"] == []
        finally:
            bus.stop()
        for tool in ("task_list", "list_agents", "wait_for_events"):  # as `ib` says when Redis dies under it
            error = client.error(tool)
            assert f"127.0.0.1:{bus.port}. Connection refused" in error and "\n" not in error, error


@pytest.mark.timeout(120)
def test_a_client_that_leaves_mid_spawn_leaves_a_whole_agent(
    agents_ib: IbRunner, rds: redis.Redis, keys: Keys, repo: Path
) -> None:
    """The client sends a spawn and closes the server's stdin once the agent's record is on the bus (the
    spawn under way): the server finishes the call before it exits, so the agent is whole."""
    server = subprocess.Popen(
        [IB, "mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        env=agents_ib.environ(), cwd=repo,
    )  # fmt: skip
    assert server.stdin is not None and server.stdout is not None

    def send(message: dict[str, Any]) -> None:
        assert server.stdin is not None
        server.stdin.write((json.dumps({"jsonrpc": "2.0", **message}) + "\n").encode())
        server.stdin.flush()

    hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    send({"id": 1, "method": "initialize", "params": hello})
    assert json.loads(server.stdout.readline())["id"] == 1
    send({"method": "notifications/initialized"})
    spawn = {"name": "spawn", "arguments": {"goal": "fake: wait", "name": "leftover", "role": "worker"}}
    send({"id": 2, "method": "tools/call", "params": spawn})
    retry_until(lambda: rds.sismember(keys.agents, "leftover"), TIMEOUT, 0.01, "the spawn under way")
    server.stdin.close()
    assert server.wait(60) == 0
    assert server.stderr is not None and b"Traceback" not in server.stderr.read()
    listed = json.loads(agents_ib.run("list", "--json").stdout)
    assert [(a["id"], a["state"] != "creating") for a in listed] == [("leftover", True)]
    assert (repo / ".ib" / "agents" / "leftover" / "repo").is_dir()
    sessions = subprocess.run(
        ["tmux", "-L", agents_ib.env["IB_TMUX_SOCKET"], "ls", "-F", "#{session_name}"],
        capture_output=True, text=True, check=False,
    ).stdout  # fmt: skip
    assert any("leftover" in name for name in sessions.split())
