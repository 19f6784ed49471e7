"""The real Claude Code CLI (pinned, manual mode) ends turns in every way a person must hear of: one event
each (complete, waiting or error), an API error that stands until the next turn, a retry that recovers
without an incident, and a killed session that gives its claimed task back."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
import redis

from bus.wire.keys import Keys
from tests.cli import IbRunner
from tests.fake_anthropic import FakeAnthropic, reply
from tests.fake_anthropic.script import ApiError, overloaded, rate_limited
from tests.reads import pane_text
from tests.streams import stream_entries
from tests.waiting import retry_until

pytestmark = pytest.mark.claude
TURN_TIMEOUT = 90.0  # a cold CLI start on 2 busy cores takes a few seconds; this is the deadline only
TURN_ENDS = ("complete", "waiting", "error")
DONE = "I HAVE COMPLETED THE GOAL"


@pytest.fixture
def manual_ib(claude_ib: IbRunner, claude_bin: Path) -> IbRunner:
    claude_ib.env["IB_AGENT_COMMAND"] = f"{claude_bin} --permission-mode default"  # ask, as without auto mode
    return claude_ib


def _events(rds: redis.Redis, keys: Keys, agent: str) -> list[dict[str, Any]]:
    found = [json.loads(fields["e"]) for _id, fields in stream_entries(rds, keys.events)]
    return [e for e in found if e.get("agent") == agent]


def _turn_ends(rds: redis.Redis, keys: Keys, agent: str) -> list[dict[str, Any]]:
    return [e for e in _events(rds, keys, agent) if e["type"] in TURN_ENDS]


def _listen(ib: IbRunner, types: str) -> dict[str, Any]:
    """`ib listen` as a person's session does: it must wake for the turn's end."""
    out = ib.run("listen", "--types", types, "--timeout", str(TURN_TIMEOUT), timeout=TURN_TIMEOUT + 30).stdout
    got: list[dict[str, Any]] = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    assert got, f"`ib listen --types {types}` woke for nothing within {TURN_TIMEOUT}s"
    return got[0]


def _screen(ib: IbRunner, agent: str) -> str:
    return pane_text(ib, agent, 60)


def _idle_with(ib: IbRunner, agent: str, text: str) -> None:
    retry_until(lambda: text in _screen(ib, agent) and "esc to interrupt" not in _screen(ib, agent),
                TURN_TIMEOUT, 0.2, f"{text!r} on an idle screen")  # fmt: skip


def test_a_question_without_the_marker_is_one_waiting_event(
    manual_ib: IbRunner, anthropic: FakeAnthropic, rds: redis.Redis, keys: Keys
) -> None:
    anthropic.script(reply("Should I use Postgres or SQLite?"))
    assert manual_ib.run("new-agent", "pick a database", "--name", "asker").returncode == 0
    woke = _listen(manual_ib, "waiting")
    assert (woke["from"], woke["type"]) == ("asker", "waiting")
    _idle_with(manual_ib, "asker", "Postgres or SQLite?")
    assert manual_ib.run("worker", "--once").returncode == 0  # the pane watcher adds no second turn end
    [waiting] = _turn_ends(rds, keys, "asker")
    assert waiting["data"]["last_message"] == "Should I use Postgres or SQLite?"
    assert rds.hget(keys.agent("asker"), "state") == "waiting"


@pytest.mark.parametrize(
    ("error", "kind", "shown", "state"),
    [(overloaded(), "overloaded", "529", "error"), (rate_limited(), "rate_limit", "429", "error")],
    ids=["529", "429"],
)
def test_a_turn_ending_api_error_is_one_error_that_idle_prompt_keeps(
    manual_ib: IbRunner, anthropic: FakeAnthropic, rds: redis.Redis, keys: Keys, error: ApiError, kind: str,
    shown: str, state: str,
) -> None:  # fmt: skip
    anthropic.script(error)  # x-should-retry: false, so Claude Code gives up at once and the turn ends
    assert manual_ib.run("new-agent", "add a flag", "--name", "busy").returncode == 0
    failed = _listen(manual_ib, state)  # a 429 without the unified headers is no usage limit: `error`
    assert (failed["from"], failed["data"]["kind"]) == ("busy", kind)
    _idle_with(manual_ib, "busy", shown)
    assert manual_ib.run("worker", "--once").returncode == 0
    # Claude Code's idle_prompt Notification comes 45-60 s after the turn: its payload is fed to the hook
    # here as Claude Code sends it, rather than waiting a minute for it
    idle = {"hook_event_name": "Notification", "notification_type": "idle_prompt", "session_id": "s",
            "message": "Claude is waiting for your input", "cwd": str(manual_ib.cwd)}  # fmt: skip
    fed = manual_ib.run("hook", "event", stdin=json.dumps(idle), env={"IB_AGENT_ID": "busy"})
    assert fed.returncode == 0, fed.stderr
    incidents = [e["type"] for e in _events(rds, keys, "busy") if e["type"] in (*TURN_ENDS, "limited")]
    assert incidents == [state]
    assert json.loads(manual_ib.run("list", "--json").stdout)[0]["state"] == state


def test_a_recovered_429_raises_no_error(
    manual_ib: IbRunner, anthropic: FakeAnthropic, rds: redis.Redis, keys: Keys
) -> None:
    anthropic.script(
        *[rate_limited(retry_after=1, retry=True) for _ in range(4)], reply(f"Added the flag.\n\n{DONE}")
    )
    worker = manual_ib.popen("worker")  # the pane watcher looks every second while Claude Code retries
    try:
        assert manual_ib.run("new-agent", "add a flag", "--name", "patient").returncode == 0
        retry_until(lambda: _detail(rds, keys, "patient").startswith("retrying"), TURN_TIMEOUT, 0.2, "retry")
        woke = _listen(manual_ib, "complete,waiting,error")
        assert (woke["from"], woke["type"]) == ("patient", "complete")
        retry_until(lambda: _detail(rds, keys, "patient") == "", TURN_TIMEOUT, 0.2, "the retry detail gone")
    finally:
        worker.terminate()
        worker.communicate(timeout=30)
    events = _events(rds, keys, "patient")
    assert [e["type"] for e in events if e["type"] in (*TURN_ENDS, "rate_limited")] == ["complete"]
    assert not {"error", "rate_limited"} & {e["data"].get("to_state") for e in events if e["type"] == "state"}


def _detail(rds: redis.Redis, keys: Keys, agent: str) -> str:
    return str(rds.hget(keys.agent(agent), "detail") or "")


def test_a_killed_session_fails_its_claimed_task(
    manual_ib: IbRunner, anthropic: FakeAnthropic, rds: redis.Redis, keys: Keys, tmux_socket: str
) -> None:
    anthropic.script(reply(f"Hello.\n\n{DONE}"))
    assert manual_ib.run("new-agent", "say hello", "--name", "holder").returncode == 0
    assert _listen(manual_ib, "complete")["from"] == "holder"
    assert manual_ib.run("task", "add", "paint it", "--id", "paint").returncode == 0
    claimed = manual_ib.run("task", "claim", "--as", "holder")
    assert claimed.returncode == 0, claimed.stderr
    session = json.loads(manual_ib.run("list", "--json").stdout)[0]["session"]

    subprocess.run(["tmux", "-L", tmux_socket, "kill-session", "-t", session], check=True)
    retry_until(
        lambda: rds.hget(keys.task("paint"), "status") == "ready", TURN_TIMEOUT, 0.2, "the claim failed"
    )
    assert manual_ib.run("worker", "--once").returncode == 0  # the watcher comes second: nothing more
    failures = [e for e in _events(rds, keys, "holder") if e["type"] == "task_failed"]
    assert len(failures) == 1 and "holder stopped (its session ended)" in str(failures[0]["msg"])
    assert [e["type"] for e in _events(rds, keys, "holder")].count("stopped") == 1
