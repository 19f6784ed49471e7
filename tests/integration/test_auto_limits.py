"""`ib auto` while the account is held by its usage limit: the loop claims nothing and says why on the task
it holds back; once the limit is lifted at its reset, the worker lets the loop go on. A real worker, fake
agents, tmux and Redis."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import pytest
import redis

from bus.costs.usage_limits import Reset
from bus.stores.limit_store import LimitStore
from bus.wire.keys import Keys
from tests.cli import IbRunner
from tests.integration.test_auto_e2e import Worker, add_task, events
from tests.waiting import retry_until


@pytest.fixture
def worker(agents_ib: IbRunner, rds: redis.Redis, keys: Keys) -> Iterator[Worker]:
    running = Worker(agents_ib, rds, keys)
    yield running
    running.stop()


def _task(ib: IbRunner, task_id: str) -> dict[str, Any]:
    shown = ib.run("task", "show", task_id, "--json")
    assert shown.returncode == 0, shown.stderr
    found: dict[str, Any] = json.loads(shown.stdout)
    return found


def test_auto_holds_its_claim_while_the_account_is_limited(
    agents_ib: IbRunner, worker: Worker, rds: redis.Redis, keys: Keys
) -> None:
    ib = agents_ib
    add_task(ib, "first", 5, "solo", "The first thing.", "fake: done Did the first thing")
    now = time.time()
    LimitStore(rds, keys).park("default", "elsewhere", Reset(now + 3600, "text"), "five_hour", now)
    worker.start()
    assert ib.run("auto", "--project", "solo", "--detach").returncode == 0

    def noted() -> list[str]:
        return [n["text"] for n in _task(ib, "first").get("notes", []) if n["text"].startswith("parked: ")]

    [why] = retry_until(noted, timeout=30, what="the parked note on the task")
    assert why.startswith("parked: account default is limited until ") and "after the reset" in why
    assert _task(ib, "first")["status"] == "ready"
    assert json.loads(ib.run("list", "--json").stdout) == []

    rds.hset(keys.limit("default"), "reset_at", f"{time.time() - 1:.3f}")  # the reset has come
    retry_until(
        lambda: _task(ib, "first")["status"] == "done", timeout=60, what="the task given out and done"
    )
    assert [e["type"] for e in events(rds, keys) if e["type"] == "task_claimed"] == ["task_claimed"]
    assert json.loads(ib.run("limits", "--json").stdout) == {"limits": []}
    assert len(noted()) == 1
