"""Every turn end raises one event, and an agent's end gives its claims back once: the hooks as Claude Code
runs them (`ib hook stop`, `ib hook event`) and the pane watcher (`ib worker --once`, real tmux), in either
order. The same with the real CLI: tests/integration/test_claude_turn_ends.py."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
import redis

from bus.stores.hashes import write_hash
from bus.wire.keys import Keys
from tests.cli import IbRunner
from tests.streams import stream_entries

TURN_ENDS = ("complete", "waiting", "error")
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def _events(rds: redis.Redis, keys: Keys) -> list[dict[str, Any]]:
    return [json.loads(f["e"]) for _i, f in stream_entries(rds, keys.events)]


def _types(rds: redis.Redis, keys: Keys) -> list[str]:
    return [str(e["type"]) for e in _events(rds, keys)]


def _hook(ib: IbRunner, hook: str, payload: dict[str, Any], agent: str = "a1") -> None:
    done = ib.run("hook", hook, stdin=json.dumps(payload), env={"IB_AGENT_ID": agent})
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")


@pytest.fixture
def watched(ib: IbRunner, rds: redis.Redis, keys: Keys, tmux_socket: str) -> str:
    """Agent `a1` of this test's worker, running in a tmux session that stays open (`sleep`)."""
    ib.env.update({"IB_TMUX_SOCKET": tmux_socket, "IB_WORKER_ID": "w-turns", "IB_STATUS_NODE_AUTO": "false"})
    session = "ib-test-a1"
    subprocess.run(["tmux", "-L", tmux_socket, "new-session", "-d", "-s", session, "sleep 600"], check=True)
    record = {"id": "a1", "session": session, "worker": "w-turns", "state": "running", "root": str(ib.cwd)}
    write_hash(rds, keys.agent("a1"), {**record, "project": "p"})
    rds.sadd(keys.agents, "a1")
    return session


def test_a_turn_without_the_marker_is_one_waiting_event(
    ib: IbRunner, rds: redis.Redis, keys: Keys, watched: str
) -> None:
    _hook(ib, "stop", {"session_id": "s", "last_assistant_message": "Postgres or SQLite?"})
    _hook(ib, "event", {"hook_event_name": "Notification", "notification_type": "idle_prompt"})
    [waiting] = _events(rds, keys)
    assert (waiting["type"], waiting["data"]["last_message"]) == ("waiting", "Postgres or SQLite?")
    assert rds.hmget(keys.agent("a1"), ["state", "state_by"]) == ["waiting", "hook"]


@pytest.mark.parametrize(
    ("error", "type_", "kind"),
    [("overloaded", "error", "overloaded"), ("rate_limit", "error", "rate_limit")],
    ids=["overloaded", "rate-limit"],
)
def test_an_api_error_stands_until_the_next_turn(
    ib: IbRunner, rds: redis.Redis, keys: Keys, watched: str, error: str, type_: str, kind: str
) -> None:
    """A plain 429 is an error of kind rate_limit; the plan's usage limit is its own turn end, `limited`
    (tests/integration/test_limit_hook.py)."""
    _hook(ib, "event", {"hook_event_name": "StopFailure", "error": error, "last_assistant_message": "API"})
    # Claude Code's idle_prompt 45-60 s after every turn end must not hide the error
    _hook(ib, "event", {"hook_event_name": "Notification", "notification_type": "idle_prompt"})
    [failed] = _events(rds, keys)
    assert (failed["type"], failed["data"]["kind"]) == (type_, kind)
    assert rds.hget(keys.agent("a1"), "state") == type_
    _hook(ib, "event", {"hook_event_name": "UserPromptSubmit", "prompt": "try again"})
    assert rds.hget(keys.agent("a1"), "state") == "running"


def test_a_retry_on_screen_is_running_with_a_detail_and_no_error(
    ib: IbRunner, rds: redis.Redis, keys: Keys, tmux_socket: str, watched: str
) -> None:
    capture = FIXTURES / "pane-states" / "running-cc2.1.332-retrying-529-w100.txt"
    shown = f"cat {capture}; sleep 600"
    subprocess.run(["tmux", "-L", tmux_socket, "respawn-pane", "-k", "-t", watched, shown], check=True)
    rds.hset(keys.agent("a1"), mapping={"state": "running", "state_by": "hook"})
    assert ib.run("worker", "--once").returncode == 0
    assert rds.hmget(keys.agent("a1"), ["state", "detail"]) == ["running", "retrying · attempt 2/10"]
    assert "running (retrying · attempt 2/10)" in ib.run("list").stdout
    assert [t for t in _types(rds, keys) if t in (*TURN_ENDS, "rate_limited")] == []


def _claimed(ib: IbRunner) -> str:
    assert ib.run("task", "add", "paint it", "--id", "paint", "--project", "p").returncode == 0
    claimed = ib.run("task", "claim", "--project", "p", "--as", "a1")
    assert claimed.returncode == 0, claimed.stderr
    return "paint"


def _task_failures(rds: redis.Redis, keys: Keys) -> list[dict[str, Any]]:
    return [e for e in _events(rds, keys) if e["type"] == "task_failed"]


def test_session_end_hook_first_fails_the_claim_once(
    ib: IbRunner, rds: redis.Redis, keys: Keys, tmux_socket: str, watched: str
) -> None:
    task = _claimed(ib)
    _hook(ib, "event", {"hook_event_name": "SessionEnd", "reason": "other"})
    subprocess.run(["tmux", "-L", tmux_socket, "kill-session", "-t", watched], check=True)
    assert ib.run("worker", "--once").returncode == 0  # the watcher sees the session gone: nothing new
    assert ib.run("worker", "--once").returncode == 0
    [failed] = _task_failures(rds, keys)
    assert "agent a1 stopped (its session ended)" in str(failed["msg"])
    assert rds.hmget(keys.task(task), ["status", "attempt"]) == ["ready", "1"]
    types = _types(rds, keys)
    assert types.count("stopped") == 1 and types.index("stopped") < types.index("task_failed")


def test_pane_watcher_first_fails_the_claim_once(
    ib: IbRunner, rds: redis.Redis, keys: Keys, tmux_socket: str, watched: str
) -> None:
    task = _claimed(ib)
    subprocess.run(["tmux", "-L", tmux_socket, "kill-session", "-t", watched], check=True)
    assert ib.run("worker", "--once").returncode == 0
    _hook(ib, "event", {"hook_event_name": "SessionEnd", "reason": "other"})  # late: said already
    assert len(_task_failures(rds, keys)) == 1
    assert rds.hget(keys.task(task), "status") == "ready"
    assert _types(rds, keys).count("stopped") == 1


def test_a_claim_the_hook_missed_is_failed_by_the_watcher(
    ib: IbRunner, rds: redis.Redis, keys: Keys, tmux_socket: str, watched: str
) -> None:
    """The hook set `stopped` but was cut short before the claims (Claude Code killed with its session)."""
    task = _claimed(ib)
    rds.hset(keys.agent("a1"), mapping={"state": "stopped", "state_by": "hook"})
    subprocess.run(["tmux", "-L", tmux_socket, "kill-session", "-t", watched], check=True)
    assert ib.run("worker", "--once").returncode == 0
    assert len(_task_failures(rds, keys)) == 1
    assert rds.hget(keys.task(task), "status") == "ready"


def test_listen_wakes_for_every_turn_end_by_default(
    ib: IbRunner, rds: redis.Redis, keys: Keys, watched: str
) -> None:
    _hook(ib, "stop", {"session_id": "s", "last_assistant_message": "Which one?"})
    _hook(ib, "event", {"hook_event_name": "UserPromptSubmit", "prompt": "Postgres"})
    _hook(ib, "event", {"hook_event_name": "StopFailure", "error": "authentication_failed"})
    out = ib.run("listen", "--timeout", "5").stdout
    woke = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    assert [(e["type"], e["data"].get("kind")) for e in woke] == [("waiting", None), ("error", "auth")]


def test_fake_agent_turn_without_the_marker_wakes_listen_once(
    agents_ib: IbRunner, rds: redis.Redis, keys: Keys
) -> None:
    """The fake agent ends its turn with a plain question, as the real CLI's test does with a model."""
    assert agents_ib.run("new-agent", "fake: reply Postgres or SQLite?", "--name", "asker").returncode == 0
    out = agents_ib.run("listen", "--timeout", "60", timeout=90).stdout
    [woke] = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    assert (woke["type"], woke["from"], woke["data"]["last_message"]) == (
        "waiting",
        "asker",
        "Postgres or SQLite?",
    )
    assert agents_ib.run("worker", "--once").returncode == 0  # the pane watcher adds no second turn end
    assert [t for t in _types(rds, keys) if t in TURN_ENDS] == ["waiting"]
