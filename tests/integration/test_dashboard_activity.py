"""The dashboard shows what each working agent does now, read from the tail of its output stream."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import redis

from bus.connection.clients import client_for
from bus.settings.settings import Settings
from bus.stores.agent_store import Agent, AgentStore
from bus.wire.keys import Keys
from tests.cli import init_repo
from worker.frontends.dashboard import Dashboard
from worker.frontends.dashboard_render import render_plain
from worker.runtime import Runtime


def test_a_working_agent_shows_its_live_status_line(
    redis_url: str, namespace: str, rds: redis.Redis, keys: Keys, tmp_path: Path
) -> None:
    store = AgentStore(rds, keys)
    store.save(Agent(id="painter", goal="Paint the shed", state="running", created_at=1.0))
    store.save(Agent(id="sweeper", goal="Sweep up", state="waiting", created_at=2.0))
    started = dt.datetime.now(dt.UTC) - dt.timedelta(seconds=75)
    for agent in ("painter", "sweeper"):
        for kind, text, tool, at in [
            ("prompt", "", "", started),
            ("tool_use", "**Read**(a.py)", "Read", started + dt.timedelta(seconds=5)),
            ("tool_result", "Read 3 lines", "Read", started + dt.timedelta(seconds=6)),
            ("tool_use", "**Bash**(pytest -q)", "Bash", started + dt.timedelta(seconds=15)),
        ]:
            rds.xadd(keys.output(agent), {"kind": kind, "text": text, "tool": tool, "ts": at.isoformat()})
    repo = init_repo(tmp_path / "repo")
    rt = Runtime(Settings(redis_url=redis_url, namespace=namespace), client_for(redis_url), repo)
    board = Dashboard(rt, client_for(redis_url, blocking=True))
    board.start()
    try:
        snapshot = board.snapshot(interactive=False)
    finally:
        board.stop()
    doing = {a.id: a.doing for a in snapshot.agents}
    assert doing["painter"].startswith("⚙ Bash pytest -q · 1m0")  # 60 s, give or take a second
    assert " — turn 1m1" in doing["painter"] and doing["painter"].endswith(", 2 tools")
    assert doing["sweeper"] == ""  # its turn is over
    assert "⚙ Bash pytest -q" in render_plain(snapshot, 80)
