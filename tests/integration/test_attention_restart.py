"""Attention items live in Redis: a "needs you" published while the worker is down is tracked when it
comes back, and an item outlives the worker that opened it until its agent moves on."""

from __future__ import annotations

from pathlib import Path

import redis

from bus.inbox.attention import AttentionStore
from bus.wire.keys import Keys
from tests.bot_process import worker_running
from tests.cli import IbRunner
from tests.integration.test_bot import emit
from tests.waiting import retry_until

TIMEOUT = 30.0


def test_items_outlive_worker_restarts(
    agents_ib: IbRunner, rds: redis.Redis, keys: Keys, tmp_path: Path
) -> None:
    store = AttentionStore(rds, keys)
    log = tmp_path / "worker.log"
    with worker_running(agents_ib, log, rds, keys):
        pass  # its first run makes the worker's place in the events stream
    emit(rds, keys, "permission", "keeper asks to use Bash: ls", sender="keeper", agent="keeper")
    with worker_running(agents_ib, log, rds, keys):
        retry_until(lambda: [i.agent for i in store.open_items()] == ["keeper"], TIMEOUT, what="the item")
    assert [i.kind for i in store.open_items()] == ["permission"]
    emit(rds, keys, "state", "keeper: permission → running", agent="keeper", data={"to_state": "running"})
    with worker_running(agents_ib, log, rds, keys):
        retry_until(lambda: store.open_items() == [], TIMEOUT, what="the item to close")
