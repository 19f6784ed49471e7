"""Budgets and the runaway watchdog with the real Claude Code CLI (pinned) offline against the scripted
Messages API, and `ib worker` running: a model that asks for the same Bash call 20 times is paused after
the sixth, and every later call is refused with the watchdog's reason; an agent over the day's budget
(IB_DAY_BUDGET) is paused at 100 % with one `budget_exceeded` (and a warning before it, unless the worker read
the answers of 80 % and 100 % at once: tests/integration/test_budgets.py shows the warning step by step),
and `ib budget raise` lets it go on."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis

from bus.wire.keys import Keys
from tests.bot_process import Worker, worker_running
from tests.cli import IbRunner
from tests.fake_anthropic import FakeAnthropic, bash, reply
from tests.streams import stream_entries
from tests.waiting import retry_until

pytestmark = [pytest.mark.claude, pytest.mark.timeout(360)]  # more than one TURN-long wait
TURN = 120.0  # deadline for a turn of 20 tool calls of a cold CLI on 2 busy cores
DONE = "Done.\n\nI HAVE COMPLETED THE GOAL"


@pytest.fixture
def worker(claude_ib: IbRunner, tmp_path: Path, rds: redis.Redis, keys: Keys) -> Iterator[Worker]:
    with worker_running(claude_ib, tmp_path / "worker.log", rds, keys) as running:
        yield running


@pytest.fixture
def budget_worker(claude_ib: IbRunner, tmp_path: Path, rds: redis.Redis, keys: Keys) -> Iterator[Worker]:
    claude_ib.env["IB_DAY_BUDGET"] = "50k"  # each scripted answer counts about 13.6k tokens
    with worker_running(claude_ib, tmp_path / "worker.log", rds, keys) as running:
        yield running


def events(rds: redis.Redis, keys: Keys, kind: str) -> list[dict[str, Any]]:
    return [e for _i, f in stream_entries(rds, keys.events) if (e := json.loads(f["e"]))["type"] == kind]


def results(anthropic: FakeAnthropic) -> list[str]:
    """The text of every tool result the model was sent, in order (from the last request, which has all)."""
    found = []
    for message in anthropic.turns_taken()[-1].body.get("messages") or []:
        content = message.get("content")
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                inner = block.get("content")
                parts = inner if isinstance(inner, list) else [{"text": inner}]
                found.append(" ".join(str(p.get("text", "")) for p in parts if isinstance(p, dict)))
    return found


def first_refused(said: list[str], reason: str) -> int:
    """The index of the first refused call; every call after it must be refused too."""
    first = next(i for i, r in enumerate(said) if reason in r)
    assert all(reason in r for r in said[first:]), said
    return first


def released_when(check: Any, what: str) -> threading.Event:
    """An event set once `check()` holds: a reply held on it is sent only then."""
    gate = threading.Event()

    def wait() -> None:
        retry_until(check, TURN, 0.05, what)
        gate.set()

    threading.Thread(target=wait, daemon=True).start()
    return gate


def test_a_model_looping_on_one_bash_call_is_paused_after_the_sixth(
    claude_ib: IbRunner, anthropic: FakeAnthropic, rds: redis.Redis, keys: Keys, worker: Worker
) -> None:
    seen = released_when(lambda: events(rds, keys, "runaway"), "the runaway event")
    loop = [reply(bash("ls", "list the files")) for _ in range(20)]
    # the seventh answer ends only once the watchdog has spoken (Claude Code may start its call as soon as
    # the tool's block is complete, before the answer ends: that call may still run)
    loop[6] = reply(bash("ls", "list the files"), hold=seen)
    anthropic.script(*loop, reply(DONE), reply("Going on.\n\nI HAVE COMPLETED THE GOAL"))
    assert claude_ib.run("new-agent", "list the files", "--name", "looper").returncode == 0
    retry_until(lambda: events(rds, keys, "complete"), TURN, 0.2, "the turn to end")

    (event,) = events(rds, keys, "runaway")
    assert event["agent"] == "looper" and event["data"]["rule"] == "repeat"
    assert event["msg"] == "looper paused: the same call 6 times in a row: Bash: ls"
    said = results(anthropic)
    assert len(said) == 20
    first = first_refused(said, "Paused by ittybus's runaway watchdog: the same call 6 times in a row")
    assert first in (6, 7), said  # the seventh call, or the eighth when Claude Code ran it mid-stream
    assert rds.hget(keys.hold("looper"), "kind") == "runaway"
    done = claude_ib.run("budget", "continue", "looper")
    assert done.stdout == "looper goes on\ntold looper to go on (its turn had ended)\n", done.stderr
    assert not rds.exists(keys.hold("looper"))
    told = "go on where you stopped"
    retry_until(lambda: any(told in t for t in anthropic.user_texts()), TURN, 0.2, "the agent told to go on")


def test_an_agent_over_the_day_budget_is_warned_paused_and_raised(
    claude_ib: IbRunner, anthropic: FakeAnthropic, rds: redis.Redis, keys: Keys, budget_worker: Worker
) -> None:
    paused = released_when(lambda: events(rds, keys, "budget_exceeded"), "the budget_exceeded event")
    steps = [reply(bash(f"echo step {n}", f"step {n}")) for n in range(1, 9)]
    steps[3] = reply(bash("echo step 4", "step 4"), chunk_delay=0.5)  # answer 3 (80 %) most often read alone
    steps[4] = reply(bash("echo step 5", "step 5"), hold=paused)  # answer 4 used it up (see the loop above)
    anthropic.script(*steps, reply(DONE), reply("Going on.\n\nI HAVE COMPLETED THE GOAL"))
    assert claude_ib.run("new-agent", "work in steps", "--name", "spender").returncode == 0
    retry_until(lambda: events(rds, keys, "complete"), TURN, 0.2, "the turn to end")

    (exceeded,) = events(rds, keys, "budget_exceeded")
    assert exceeded["agent"] == "spender"
    told = [
        e["type"]
        for _i, f in stream_entries(rds, keys.events)
        if "budget" in (e := json.loads(f["e"]))["type"]
    ]
    assert told in (["budget_warning", "budget_exceeded"], ["budget_exceeded"])
    assert exceeded["data"]["scope"] == "day" and exceeded["data"]["limit_shown"] == "50k tokens"
    said = results(anthropic)
    assert [r.strip() for r in said[:4]] == [f"step {n}" for n in range(1, 5)]
    first = first_refused(said, "Paused by ittybus: the day")
    assert first in (4, 5), said  # the fifth call, or the sixth when Claude Code ran it mid-stream
    assert "budget of 50k tokens" in said[first]
    raised = claude_ib.run("budget", "raise", "spender", "100k")
    assert raised.returncode == 0, raised.stderr
    assert raised.stdout.endswith("spender goes on\ntold spender to go on (its turn had ended)\n")
    assert "budget is now 150k tokens" in raised.stdout
    assert not rds.exists(keys.hold("spender"))
    note = "ittybus: the day"
    retry_until(lambda: any(t.startswith(note) for t in anthropic.user_texts()), TURN, 0.2, "the agent told")
