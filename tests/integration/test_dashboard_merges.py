"""The dashboard reads the merge queue from the merge store the worker keeps, in merge order."""

from __future__ import annotations

from pathlib import Path

import redis

from bus.connection.clients import client_for
from bus.settings.settings import Settings
from bus.tasks.merges import MergeStore
from bus.wire.keys import Keys
from tests.cli import init_repo
from worker.frontends.dashboard import Dashboard
from worker.runtime import Runtime


def test_merge_queue_shows_on_the_dashboard(
    redis_url: str, namespace: str, rds: redis.Redis, keys: Keys, tmp_path: Path
) -> None:
    store = MergeStore(rds, keys, 1000)
    store.enqueue(project="shed", agent="painter", branch="agent/painter", target="main", worker="w1")
    store.enqueue(project="shed", agent="sweeper", branch="agent/sweeper", target="main", worker="w1")
    store.enqueue(
        project="shed",
        agent="dusty",
        branch="agent/dusty",
        target="main",
        worker="w1",
        size=90,
        changed=("a",),
    )
    store.enqueue(
        project="shed", agent="tidy", branch="agent/tidy", target="main", worker="w1", size=2, changed=("a",)
    )
    repo = init_repo(tmp_path / "repo")
    rt = Runtime(Settings(redis_url=redis_url, namespace=namespace), client_for(redis_url), repo)
    board = Dashboard(rt, client_for(redis_url, blocking=True))
    board.start()
    try:
        merges = board.snapshot().merges
    finally:
        board.stop()
    assert [(m.project, m.agent, m.state) for m in merges] == [
        ("shed", "painter", "queued"),
        ("shed", "sweeper", "queued"),
        ("shed", "tidy", "queued ↑ smaller"),
        ("shed", "dusty", "queued"),
    ]
