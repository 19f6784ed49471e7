"""The pane watcher keeps what it notes per agent only while the agent is one of its own: a worker that
runs for weeks through thousands of agents holds no trace of the ones torn down."""

from __future__ import annotations

from pathlib import Path

import redis

from bus.connection.clients import client_for
from bus.settings.settings import Settings
from bus.stores.agent_store import Agent, AgentStore
from bus.wire.keys import Keys
from tests.cli import init_repo
from worker.runtime import Runtime
from worker.service.pane_watch import PaneWatcher


def test_what_it_noted_of_agents_gone_is_dropped_at_the_next_tick(
    redis_url: str, namespace: str, rds: redis.Redis, keys: Keys, tmp_path: Path
) -> None:
    rt = Runtime(
        Settings(redis_url=redis_url, namespace=namespace), client_for(redis_url), init_repo(tmp_path)
    )
    watcher = PaneWatcher(rt)
    for gone in range(500):  # as the watcher leaves them after agents' dialogs and captures
        watcher.drawn[f"gone-{gone}"] = f"prompt-{gone}"
        watcher.captured_at[f"gone-{gone}"] = 1.0
        watcher.asking[f"gone-{gone}"] = f"prompt-{gone}"
    watcher.tick()
    assert (watcher.drawn, watcher.captured_at, watcher.asking) == ({}, {}, {})

    AgentStore(rds, keys).save(Agent(id="kept", goal="stay", state="waiting", worker=rt.worker_id))
    watcher.drawn["kept"] = "prompt-1"
    watcher.drawn["gone"] = "prompt-2"
    watcher.forget_all_but({"kept"})
    assert watcher.drawn == {"kept": "prompt-1"}
