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

from bus.keys import Keys
from tests.cli import IbRunner
from tests.fake_anthropic import FakeAnthropic, reply, usage_limited
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
