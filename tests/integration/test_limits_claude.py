"""The real Claude Code CLI hits its plan's usage limit (the scripted API answers 429 with the unified
headers and a reset a minute or two ahead): the person is told once, the agent is parked, and at the reset
the worker resumes it by itself and the turn finishes."""

from __future__ import annotations

import json
import math
import time
from typing import Any

import pytest
import redis

from bus.wire.keys import Keys
from tests.cli import IbRunner
from tests.fake_anthropic import FakeAnthropic, rate_limited, reply, usage_limited
from tests.streams import stream_entries
from tests.waiting import retry_until

pytestmark = pytest.mark.claude
TURN_TIMEOUT = 90.0  # a cold CLI start on 2 busy cores takes a few seconds; this is the deadline only
DONE = "I HAVE COMPLETED THE GOAL"


def _events(rds: redis.Redis, keys: Keys, agent: str) -> list[dict[str, Any]]:
    found = [json.loads(fields["e"]) for _id, fields in stream_entries(rds, keys.events)]
    return [e for e in found if e.get("agent") == agent]


def _of_type(rds: redis.Redis, keys: Keys, agent: str, type_: str) -> list[dict[str, Any]]:
    return [e for e in _events(rds, keys, agent) if e["type"] == type_]


def _next_whole_minute(ahead: float) -> float:
    """A reset at least `ahead` seconds from now on a whole minute: the text Claude Code shows ("resets
    1:52am") names minutes, and the header's epoch is the same moment."""
    return float(math.ceil((time.time() + ahead) / 60) * 60)


@pytest.mark.timeout(420)
def test_a_limited_agent_is_told_parked_and_resumed_at_the_reset(
    claude_ib: IbRunner, anthropic: FakeAnthropic, rds: redis.Redis, keys: Keys
) -> None:
    reset = _next_whole_minute(60)
    anthropic.script(usage_limited(reset), reply(f"Added the flag.\n\n{DONE}"))
    worker = claude_ib.popen("worker")
    try:
        assert claude_ib.run("new-agent", "add a flag", "--name", "capped").returncode == 0
        retry_until(lambda: _of_type(rds, keys, "capped", "limited"), TURN_TIMEOUT, 0.2, "the limited event")
        [limited] = _of_type(rds, keys, "capped", "limited")
        assert limited["data"]["reset_at"] == reset
        assert limited["data"]["window"] == "five_hour"
        assert f"limited until {limited['data']['until']}" in limited["msg"]
        assert rds.hget(keys.agent("capped"), "state") == "limited"
        shown = json.loads(claude_ib.run("limits", "--json").stdout)["limits"]
        assert [(s["account"], s["reset_at"], s["agents"]) for s in shown] == [("default", reset, ["capped"])]

        retry_until(
            lambda: _of_type(rds, keys, "capped", "complete"),
            reset - time.time() + TURN_TIMEOUT,
            0.5,
            "the resumed turn's end",
        )
    finally:
        worker.terminate()
        worker.communicate(timeout=30)
    turns = anthropic.turns_taken()
    assert len(turns) == 2  # nothing was sent while the limit held
    # the failed turn left no answer, so Claude Code sends the goal again with "continue" after it
    assert turns[1].at >= reset and str(turns[1].user_text()).endswith("\n\ncontinue")
    [resumed] = _of_type(rds, keys, "capped", "resumed")
    assert resumed["data"]["reset_at"] == reset
    ends = [e["type"] for e in _events(rds, keys, "capped") if e["type"] in ("limited", "error", "complete")]
    assert ends == ["limited", "complete"]
    assert json.loads(claude_ib.run("limits", "--json").stdout) == {"limits": []}


def _logged_in(ib: IbRunner) -> None:
    """The agents run on a Claude login instead of an API key: Claude Code then reads the 429's unified
    headers itself ("You've hit your 5-hour limit") and records them in the transcript."""
    del ib.env["ANTHROPIC_API_KEY"]
    ib.env["CLAUDE_CODE_OAUTH_TOKEN"] = "sk-ant-oat01-ittybus-test"


PLAIN_429 = {"api-key": False, "login": True}


@pytest.mark.timeout(240)
@pytest.mark.parametrize("login", PLAIN_429.values(), ids=PLAIN_429.keys())
def test_a_plain_429_that_ends_the_turn_is_an_error_not_a_usage_limit(
    claude_ib: IbRunner, anthropic: FakeAnthropic, rds: redis.Redis, keys: Keys, login: bool
) -> None:
    if login:
        _logged_in(claude_ib)
    anthropic.script(rate_limited(retry_after=75))  # no unified headers: the organisation's rate limit
    assert claude_ib.run("new-agent", "add a flag", "--name", "busy").returncode == 0
    retry_until(lambda: _of_type(rds, keys, "busy", "error"), TURN_TIMEOUT, 0.2, "the error event")
    [error] = _of_type(rds, keys, "busy", "error")
    assert error["data"]["kind"] == "rate_limit"
    assert "not the plan's usage limit" in error["msg"]
    assert "rate limit for your organization" in error["data"]["last_message"]
    assert not _of_type(rds, keys, "busy", "limited")
    assert rds.hget(keys.agent("busy"), "state") == "error"
    assert json.loads(claude_ib.run("limits", "--json").stdout) == {"limits": []}
    assert claude_ib.run("limits").stdout == "no account is limited\n"


@pytest.mark.timeout(420)
def test_a_usage_limit_on_a_login_waits_for_the_apis_reset(
    claude_ib: IbRunner, anthropic: FakeAnthropic, rds: redis.Redis, keys: Keys
) -> None:
    _logged_in(claude_ib)
    reset = _next_whole_minute(60) + 17  # off the minute: only the header (not the screen's "1:52am") has it
    anthropic.script(usage_limited(reset), reply(f"Added the flag.\n\n{DONE}"))
    worker = claude_ib.popen("worker")
    try:
        assert claude_ib.run("new-agent", "add a flag", "--name", "capped").returncode == 0
        retry_until(lambda: _of_type(rds, keys, "capped", "limited"), TURN_TIMEOUT, 0.2, "the limited event")
        [limited] = _of_type(rds, keys, "capped", "limited")
        assert (limited["data"]["reset_at"], limited["data"]["reset_source"]) == (reset, "header")
        assert limited["data"]["window"] == "five_hour"
        retry_until(
            lambda: _of_type(rds, keys, "capped", "complete"),
            reset - time.time() + TURN_TIMEOUT,
            0.5,
            "the resumed turn's end",
        )
    finally:
        worker.terminate()
        worker.communicate(timeout=30)
    turns = anthropic.turns_taken()
    assert turns[1].at >= reset
    assert turns[1].at - reset < 60  # resumed within a minute of the API's reset
    assert not _of_type(rds, keys, "capped", "error")
    assert json.loads(claude_ib.run("limits", "--json").stdout) == {"limits": []}


@pytest.mark.timeout(240)
def test_a_killed_agent_is_no_longer_parked(
    claude_ib: IbRunner, anthropic: FakeAnthropic, rds: redis.Redis, keys: Keys
) -> None:
    _logged_in(claude_ib)
    reset = time.time() + 3600
    anthropic.script(usage_limited(reset))
    assert claude_ib.run("new-agent", "add a flag", "--name", "capped").returncode == 0
    retry_until(lambda: _of_type(rds, keys, "capped", "limited"), TURN_TIMEOUT, 0.2, "the limited event")
    shown = json.loads(claude_ib.run("limits", "--json").stdout)["limits"]
    assert [(s["reset_at"], s["agents"]) for s in shown] == [(float(int(reset)), ["capped"])]
    killed = claude_ib.run("kill", "--force", "capped")
    assert killed.returncode == 0, killed.stderr
    shown = json.loads(claude_ib.run("limits", "--json").stdout)["limits"]
    assert [(s["reset_at"], s["agents"]) for s in shown] == [(float(int(reset)), [])]
    assert "parked: none" in claude_ib.run("limits").stdout
