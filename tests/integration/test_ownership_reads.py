"""A command on an agent reads the agent's record once, where it comes in: the route decides the worker
from it and the operation checks and uses the same record (it read it up to three times before).

The client is a real redis-py client on the real Redis that remembers the commands it sent."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import redis

from bus.commands.worker_commands import Look
from bus.settings.settings import Settings
from bus.stores.agent_store import Agent
from worker.agents.ownership import NotOwner
from worker.runtime import Runtime
from worker.service.operations import run_operation
from worker.service.route import run_on_owner


class RememberingRedis(redis.Redis):
    """redis-py, unchanged, keeping the name and first argument of every command it sends."""

    sent: list[tuple[str, str]]

    def execute_command(self, *args: Any, **options: Any) -> Any:
        self.sent.append((str(args[0]), str(args[1]) if len(args) > 1 else ""))
        # redis-py leaves execute_command unannotated: name its type here rather than silence the call
        send: Callable[..., Any] = super().execute_command
        return send(*args, **options)


@pytest.fixture
def rt(redis_url: str, namespace: str, rds: redis.Redis, tmux_socket: str, tmp_path: Path) -> Runtime:
    client = RememberingRedis.from_url(redis_url, decode_responses=True)
    assert isinstance(client, RememberingRedis)  # from_url builds `cls`; its stub says Redis
    client.sent = []
    settings = Settings(redis_url=redis_url, namespace=namespace, worker_id="w1", tmux_socket=tmux_socket)
    return Runtime(settings, client, tmp_path)


def _reads_of(rt: Runtime, agent_id: str) -> int:
    assert isinstance(rt.client, RememberingRedis)
    return rt.client.sent.count(("HGETALL", rt.keys.agent(agent_id)))


def test_look_reads_the_agent_once(rt: Runtime, tmux_socket: str) -> None:
    session = "ib-a1"
    start = ["tmux", "-L", tmux_socket, "new-session", "-d", "-s", session, "sleep 60"]
    subprocess.run(start, check=True)
    rt.agents.save(Agent(id="a1", session=session, worker="w1"))
    assert isinstance(run_on_owner(rt, Look(agent="a1")), str)
    assert _reads_of(rt, "a1") == 1


def test_another_workers_agent_is_refused_from_the_record_given(rt: Runtime) -> None:
    rt.agents.save(Agent(id="a2", session="ib-a2", worker="w1"))  # what Redis says, unread here
    record = Agent(id="a2", session="ib-a2", worker="w2")  # what the route read
    with pytest.raises(NotOwner, match="runs on worker 'w2'"):
        run_operation(rt, Look(agent="a2"), record)
    assert _reads_of(rt, "a2") == 0


def test_without_a_record_the_operation_reads_it_once(rt: Runtime) -> None:
    rt.agents.save(Agent(id="a3", session="ib-a3", worker="w2"))
    with pytest.raises(NotOwner):
        run_operation(rt, Look(agent="a3"))
    assert _reads_of(rt, "a3") == 1
