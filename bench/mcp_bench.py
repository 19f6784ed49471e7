"""A tool call of `ib mcp` beside the same `ib` command run from a shell, in one run: `list_agents` beside
`ib list` and `look` beside `ib look`, with one fake agent in a tmux server of the benchmark's own; and
the wake-up of a waiting `wait_for_events` beside that of a waiting `ib listen`.

    .venv/bin/python -m bench.mcp_bench [--runs 30] [--events 200]

The tool call is timed from the client's request to its result, over stdio to a server that is already
running; the command from its start to its exit, served by the warm server (worker.cli.warm, the default)
and alone (`IB_WARM=0`: a process start, imports, the bus connection). A wake-up is the time from an
event's publication to the waiter's answer: the tool's result (each call with the cursor of the last), the
line `ib listen` prints (bench.bus_bench's measure).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import anyio
import redis
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from bench.bus_bench import wake_latency_ib
from bench.common import IB, REDIS_URL, ib_env, scratch_namespace, summary_ms
from bus.events.envelope import make_event
from bus.events.streams import publish
from bus.wire.keys import Keys

AGENT = "bench-agent"
WAKE_TYPE = "bench_wake"
SETTLE = 0.05  # seconds between a call's request and the event, so the server is waiting when it comes


def _command_times(args: list[str], env: dict[str, str], cwd: Path, runs: int) -> list[float]:
    subprocess.run([IB, *args], env=env, cwd=cwd, capture_output=True, check=True)  # not timed: warms up
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run([IB, *args], env=env, cwd=cwd, capture_output=True, check=True)
        times.append(time.perf_counter() - start)
    return times


async def _tool_times(session: ClientSession, runs: int) -> dict[str, list[float]]:
    found: dict[str, list[float]] = {"list_agents": [], "look": []}
    for tool, arguments in (("list_agents", {}), ("look", {"agent": AGENT})):
        await session.call_tool(tool, arguments)  # the first call builds the server's context
        for _ in range(runs):
            start = time.perf_counter()
            result = await session.call_tool(tool, arguments)
            found[tool].append(time.perf_counter() - start)
            assert not result.is_error, result
    return found


async def _wake_times(session: ClientSession, namespace: str, events: int) -> list[float]:
    """Each event to a `wait_for_events` already waiting for its type, with the cursor of the last call."""
    client, keys = redis.Redis.from_url(REDIS_URL, decode_responses=True), Keys(namespace)
    now = await session.call_tool("wait_for_events", {"timeout": 0})
    cursor = _data(now)["cursor"]
    samples = []
    for i in range(events):
        answer: dict[str, Any] = {}
        async with anyio.create_task_group() as group:
            group.start_soon(_wait, session, cursor, answer)
            await anyio.sleep(SETTLE)
            sent = time.perf_counter()
            publish(client, keys, make_event(WAKE_TYPE, str(i)), maxlen=100_000)
        assert [e["msg"] for e in answer["data"]["events"]] == [str(i)], answer
        samples.append(answer["at"] - sent)
        cursor = answer["data"]["cursor"]
    client.close()
    return samples


async def _wait(session: ClientSession, cursor: str, answer: dict[str, Any]) -> None:
    """One wait_for_events call; `answer` gets when its result came and its data."""
    arguments = {"cursor": cursor, "types": [WAKE_TYPE], "timeout": 60}
    result = await session.call_tool("wait_for_events", arguments)
    answer["at"], answer["data"] = time.perf_counter(), _data(result)


def _data(result: Any) -> dict[str, Any]:
    assert not result.is_error and result.structured_content is not None, result
    data: dict[str, Any] = result.structured_content
    return data


async def _served(env: dict[str, str], cwd: Path, namespace: str, args: argparse.Namespace) -> Any:
    params = StdioServerParameters(command=IB, args=["mcp"], env=env, cwd=str(cwd))
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        return await _tool_times(session, args.runs), await _wake_times(session, namespace, args.events)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30, help="calls and commands of each kind")
    parser.add_argument("--events", type=int, default=200, help="wake-ups of each waiter")
    args = parser.parse_args()
    with scratch_namespace() as namespace, tempfile.TemporaryDirectory() as folder:
        repo = Path(folder) / "repo"
        repo.mkdir()
        for git in (["init", "-q", "-b", "main"], ["commit", "-q", "--allow-empty", "-m", "start"]):
            subprocess.run(["git", "-c", "user.name=b", "-c", "user.email=b@b", *git], cwd=repo, check=True)
        socket = f"ibbench-{uuid.uuid4().hex[:8]}"
        env = ib_env(
            namespace,
            str(Path(folder) / "spool"),
            IB_TMUX_SOCKET=socket,
            IB_AGENT_COMMAND=f"{sys.executable} -m worker.fake.agent",
            IB_FAKE_TRANSCRIPT_DIR=str(Path(folder) / "transcripts"),
        )
        try:
            subprocess.run(
                [IB, "new-agent", "fake: wait", "--name", AGENT],
                env=env,
                cwd=repo,
                check=True,
                capture_output=True,
            )
            tools, woken = anyio.run(_served, env, repo, namespace, args)
            print(f"== tool call → result beside the command from a shell ({args.runs} runs each)")
            for tool, command in (("list_agents", ["list"]), ("look", ["look", AGENT])):
                served = _command_times(command, env, repo, args.runs)
                alone = _command_times(command, {**env, "IB_WARM": "0"}, repo, args.runs)
                print(f"  mcp {tool:<30} {summary_ms(tools[tool])}")
                print(f"  ib {' '.join(command):<31} {summary_ms(served)}")
                print(f"  ib {' '.join(command) + ' (IB_WARM=0)':<31} {summary_ms(alone)}")
        finally:
            subprocess.run(["tmux", "-L", socket, "kill-server"], capture_output=True, check=False)
    print(f"== wake-up, event published → the waiter's answer ({args.events} events each)")
    print(f"  mcp wait_for_events              {summary_ms(woken)}")
    print(f"  ib listen                        {summary_ms(wake_latency_ib(args.events))}")


if __name__ == "__main__":
    main()
