"""The pane watcher (`ib worker --once`, real tmux) on screens no hook reports: the folder-trust dialog
(Claude Code runs no hook before it is answered). A retried API call: tests/integration/test_turn_ends.py."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
import redis

from bus.keys import Keys
from tests.cli import IbRunner

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def _show(ib: IbRunner, rds: redis.Redis, keys: Keys, socket: str, capture: Path) -> None:
    """An agent record whose tmux session shows `capture` and stays open."""
    session = "ib-test-screen"
    subprocess.run(
        ["tmux", "-L", socket, "new-session", "-d", "-s", session, "-x", "200", "-y", "50",
         f"cat {capture}; sleep 600"],
        check=True,
    )  # fmt: skip
    worker = ib.env["IB_WORKER_ID"]
    record = {"id": "screen", "session": session, "worker": worker, "state": "running", "root": str(ib.cwd)}
    rds.hset(keys.agent("screen"), mapping=record)
    rds.sadd(keys.agents, "screen")


def _events(rds: redis.Redis, keys: Keys) -> list[dict[str, object]]:
    return [json.loads(f["e"]) for _i, f in rds.xrange(keys.events)]


@pytest.fixture
def watcher_ib(ib: IbRunner, tmux_socket: str) -> IbRunner:
    ib.env.update(
        {"IB_TMUX_SOCKET": tmux_socket, "IB_WORKER_ID": "w-screens", "IB_STATUS_NODE_AUTO": "false"}
    )
    return ib


def test_the_folder_trust_dialog_is_an_event_once(
    watcher_ib: IbRunner, rds: redis.Redis, keys: Keys, tmux_socket: str
) -> None:
    _show(watcher_ib, rds, keys, tmux_socket, FIXTURES / "dialogs" / "trust-200.claude-2.1.332.txt")
    assert watcher_ib.run("worker", "--once").returncode == 0
    assert watcher_ib.run("worker", "--once").returncode == 0  # a second look: no second event
    [asked] = [e for e in _events(rds, keys) if e["type"] == "permission"]
    data = asked["data"]
    assert isinstance(data, dict)
    assert (data["kind"], data["folder"], data["options"]) == (
        "trust",
        "/tmp/cc-hooks-probe/repo",
        ["trust", "refuse"],
    )
    assert rds.hgetall(keys.prompt("screen"))["id"] == data["prompt_id"]
    assert rds.hget(keys.agent("screen"), "state") == "permission"
