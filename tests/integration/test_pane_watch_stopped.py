"""The pane watcher (real tmux, real Redis) tells `stopped` only for an agent that started: `spawn` records
an agent before it opens its tmux session, and a tick in between found no pane and said "X stopped (its
session ended)" before the agent's own `spawned` event. A pane never listed is no pane that ended."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import redis

from bus.connection.clients import client_for
from bus.settings.settings import Settings
from bus.stores.agent_store import Agent, AgentStore
from bus.wire.keys import Keys
from tests.cli import IbRunner
from tests.streams import stream_entries
from worker.runtime import Runtime
from worker.service.pane_watch import PaneWatcher


def _told(rds: redis.Redis, keys: Keys) -> list[tuple[str, str]]:
    return [(e["type"], e["msg"]) for e in (json.loads(f["e"]) for _i, f in stream_entries(rds, keys.events))]


def _tmux(socket: str, *args: str) -> None:
    subprocess.run(["tmux", "-L", socket, *args], check=True)


def test_no_stopped_before_the_agent_s_session_opens_and_one_once_it_ends(
    ib: IbRunner, redis_url: str, namespace: str, rds: redis.Redis, keys: Keys, tmux_socket: str
) -> None:
    settings = Settings(redis_url=redis_url, namespace=namespace, tmux_socket=tmux_socket)
    rt = Runtime(settings, client_for(redis_url), Path(ib.cwd))
    session = "ib-test-early"
    agent = Agent(id="early", goal="g", state="creating", state_at=time.time(), worker=rt.worker_id)
    AgentStore(rds, keys).save(agent.replace(session=session))
    _tmux(tmux_socket, "new-session", "-d", "-s", "ib-test-other", "sleep 600")  # tmux lists other panes
    watcher = PaneWatcher(rt)
    for _ in range(3):  # recorded, its session not opened yet: as `spawn` leaves it for a moment
        watcher.tick()
    assert _told(rds, keys) == []
    assert rds.hget(keys.agent("early"), "state") == "creating"

    _tmux(tmux_socket, "new-session", "-d", "-s", session, "sleep 600")
    watcher.tick()
    _tmux(tmux_socket, "kill-session", "-t", session)
    watcher.tick()
    watcher.tick()
    assert [t for t in _told(rds, keys) if t[0] == "stopped"] == [
        ("stopped", "early stopped (its session ended)")
    ]


def test_an_agent_that_ran_is_told_stopped_though_this_watcher_never_listed_its_pane(
    ib: IbRunner, redis_url: str, namespace: str, rds: redis.Redis, keys: Keys, tmux_socket: str
) -> None:
    """A worker started after the agent's session ended (it ran: its state is past `creating`)."""
    settings = Settings(redis_url=redis_url, namespace=namespace, tmux_socket=tmux_socket)
    rt = Runtime(settings, client_for(redis_url), Path(ib.cwd))
    ran = Agent(id="ran", goal="g", state="running", worker=rt.worker_id, session="ib-test-gone")
    AgentStore(rds, keys).save(ran)
    _tmux(tmux_socket, "new-session", "-d", "-s", "ib-test-other", "sleep 600")
    PaneWatcher(rt).tick()
    assert ("stopped", "ran stopped (its session ended)") in _told(rds, keys)
