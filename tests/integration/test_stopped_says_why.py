"""A `stopped` event says why (issue 25, point 2): a program that ended by itself gives its exit status
and the last lines it printed (from the pane remain-on-exit keeps), in the event, `ib list` and `ib info`;
an end ittybus caused (ib kill, a merge) says so, from the SessionEnd hook or the pane watcher alike."""

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
from tests.fake_anthropic import FakeAnthropic, reply
from tests.streams import stream_entries
from tests.waiting import retry_until

TURN_TIMEOUT = 90.0  # a cold CLI start on 2 busy cores takes a few seconds; this is the deadline only
REFUSAL = "--dangerously-skip-permissions cannot be used with root/sudo privileges for security reasons"


def _stopped(rds: redis.Redis, keys: Keys) -> list[dict[str, Any]]:
    events = [json.loads(f["e"]) for _i, f in stream_entries(rds, keys.events)]
    return [e for e in events if e["type"] == "stopped"]


def test_a_program_that_refuses_to_start_says_why(
    agents_ib: IbRunner, rds: redis.Redis, keys: Keys, tmp_path: Path
) -> None:
    refusing = tmp_path / "refusing-claude"
    refusing.write_text(f"#!/bin/sh\necho 'Claude Code 2.1'\necho '{REFUSAL}' >&2\nexit 1\n")
    refusing.chmod(0o755)
    ib = agents_ib
    agents_command = ib.env["IB_AGENT_COMMAND"]
    ib.env["IB_AGENT_COMMAND"] = str(refusing)
    spawned = ib.run("new-agent", "goal", "--name", "root1")
    assert spawned.returncode == 0, spawned.stderr

    def said() -> list[dict[str, Any]]:
        assert ib.run("worker", "--once").returncode == 0
        return _stopped(rds, keys)

    [event] = retry_until(said, timeout=30, what="the stopped event")
    assert event["msg"] in (f"root1 stopped (exit status 1): {REFUSAL}", f"root1 stopped (exited): {REFUSAL}")
    assert event["data"]["last_lines"] == ["Claude Code 2.1", REFUSAL]
    assert event["data"]["exit_status"] in (1, None)  # tmux 3.3a does not always write the status
    [row] = json.loads(ib.run("list", "--json").stdout)
    listed = ib.run("list").stdout
    words = " ".join(listed.split())  # the table wraps the state cell on its own lines
    assert row["state"] == "stopped" and REFUSAL[:40] in words, listed
    assert ib.run("worker", "--once").returncode == 0
    assert len(_stopped(rds, keys)) == 1  # said once, not on every later tick
    ib.env["IB_AGENT_COMMAND"] = agents_command  # the program fixed: a resume leaves the old reason behind
    resumed = ib.run("resume", "root1")
    assert resumed.returncode == 0, resumed.stderr
    assert rds.hmget(keys.agent("root1"), ["detail", "ending"]) == ["", ""]
    assert REFUSAL[:40] not in ib.run("list").stdout


def _watched(ib: IbRunner, rds: redis.Redis, keys: Keys, tmux_socket: str) -> str:
    """Agent `a1` of this test's worker in a tmux session that stays open (`sleep`)."""
    ib.env.update({"IB_TMUX_SOCKET": tmux_socket, "IB_WORKER_ID": "w-why", "IB_STATUS_NODE_AUTO": "false"})
    session = "ib-test-why"
    subprocess.run(["tmux", "-L", tmux_socket, "new-session", "-d", "-s", session, "sleep 600"], check=True)
    record = {"id": "a1", "session": session, "worker": "w-why", "state": "running", "root": str(ib.cwd)}
    write_hash(rds, keys.agent("a1"), record)
    rds.sadd(keys.agents, "a1")
    return session


def test_a_teardown_says_so_in_the_session_end_hook(
    ib: IbRunner, rds: redis.Redis, keys: Keys, tmux_socket: str
) -> None:
    _watched(ib, rds, keys, tmux_socket)
    rds.hset(keys.agent("a1"), "ending", "ib kill ended it")  # what teardown records before it ends it
    payload = json.dumps({"hook_event_name": "SessionEnd", "reason": "other"})
    done = ib.run("hook", "event", stdin=payload, env={"IB_AGENT_ID": "a1"})
    assert (done.returncode, done.stderr) == (0, "")
    [event] = _stopped(rds, keys)
    assert event["msg"] == "a1 stopped: ib kill ended it" and event["data"]["ending"] == "ib kill ended it"


def test_a_kill_says_so_when_the_pane_watcher_sees_it_first(
    ib: IbRunner, rds: redis.Redis, keys: Keys, tmux_socket: str
) -> None:
    session = _watched(ib, rds, keys, tmux_socket)
    rds.hset(keys.agent("a1"), "ending", "merged into main; ittybus ended it")
    subprocess.run(["tmux", "-L", tmux_socket, "kill-session", "-t", session], check=True)
    assert ib.run("worker", "--once").returncode == 0
    [event] = _stopped(rds, keys)
    assert event["msg"] == "a1 stopped: merged into main; ittybus ended it"


@pytest.mark.claude
def test_ib_kill_of_real_claude_code_says_ib_kill_ended_it(
    claude_ib: IbRunner, anthropic: FakeAnthropic, rds: redis.Redis, keys: Keys
) -> None:
    """Claude Code runs its SessionEnd hook as teardown terminates it: the event names the kill, not
    "Claude Code exited: other" (which reads as a crash)."""
    anthropic.script(reply("Postgres or SQLite?"))
    assert claude_ib.run("new-agent", "pick a database", "--name", "ended").returncode == 0
    retry_until(
        lambda: rds.hget(keys.agent("ended"), "state") == "waiting", TURN_TIMEOUT, 0.2, "the first turn's end"
    )
    killed = claude_ib.run("kill", "ended")  # graceful: SIGTERM, as after a merge
    assert killed.returncode == 0, killed.stderr
    stopped = [e for e in _stopped(rds, keys) if e.get("agent") == "ended"]
    assert [e["msg"] for e in stopped] == ["ended stopped: ib kill ended it"]
