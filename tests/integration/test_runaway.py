"""The runaway watchdog with `ib worker` running and the real hook entry point: an agent that makes the same
Bash call 20 times in a row is paused after the sixth (IB_RUNAWAY_REPEATS' default), one `runaway` event
says why with the last calls, and `ib budget continue` lets it go on with its calls so far forgotten. The
hook lets every call through when the bus is out of reach."""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis

from bus.connection.clients import client_for
from bus.costs.usage import Usage
from bus.settings.settings import Settings
from bus.stores import usage_store
from bus.stores.agent_store import Agent, AgentStore
from bus.wire.keys import Keys
from tests.bot_process import Worker, worker_running
from tests.cli import IbRunner
from tests.streams import stream_entries
from tests.tool_calls import pre_tool_use
from tests.waiting import retry_until
from worker.budgets.watchdog import Watchdog
from worker.runtime import Runtime

AGENT = "looper"
REPEATS = 6  # IB_RUNAWAY_REPEATS' default


@pytest.fixture
def worker(agents_ib: IbRunner, tmp_path: Path, rds: redis.Redis, keys: Keys) -> Iterator[Worker]:
    with worker_running(agents_ib, tmp_path / "worker.log", rds, keys) as running:
        yield running


def runaways(rds: redis.Redis, keys: Keys) -> list[dict[str, Any]]:
    return [e for _i, f in stream_entries(rds, keys.events) if (e := json.loads(f["e"]))["type"] == "runaway"]


def watchdog_read(rds: redis.Redis, stream: str) -> int:
    """How many calls the worker's watchdog has read and settled (-1 while some are in hand)."""
    groups = rds.xinfo_groups(stream) if rds.exists(stream) else []
    group = next((g for g in groups if g["name"] == "watchdog"), None)
    return -1 if group is None or group["pending"] else int(group["entries-read"] or 0)


def test_a_twenty_call_loop_is_paused_told_and_let_go_on(
    agents_ib: IbRunner, worker: Worker, repo: Path, rds: redis.Redis, keys: Keys
) -> None:
    (repo / ".ib" / "agents" / AGENT).mkdir(parents=True)
    wid = agents_ib.env["IB_WORKER_ID"]
    AgentStore(rds, keys).save(Agent(id=AGENT, project="shed", worker=wid, session=f"{AGENT}-gone"))
    said = [pre_tool_use(agents_ib, repo, AGENT, "Bash", command="ls -la") for _ in range(20)]

    assert said[:REPEATS] == [None] * REPEATS  # the loop shows only once the sixth call is made
    (event,) = retry_until(lambda: runaways(rds, keys), 20, 0.05, "the runaway event")
    refused = retry_until(lambda: pre_tool_use(agents_ib, repo, AGENT, "Bash", command="ls -la"), 20, 0.05)
    assert refused.startswith(
        "Paused by ittybus's runaway watchdog: the same call 6 times in a row: Bash: ls -la."
    )
    assert said[-1] == refused  # the loop was stopped within its twenty calls
    assert pre_tool_use(agents_ib, repo, AGENT, "Edit", file_path="a.py") == refused  # every tool waits
    assert event["agent"] == AGENT and event["project"] == "shed"
    assert event["msg"] == f"{AGENT} paused: the same call 6 times in a row: Bash: ls -la"
    assert event["data"]["rule"] == "repeat"
    assert [c["summary"] for c in event["data"]["calls"]][-REPEATS:] == ["Bash: ls -la"] * REPEATS
    assert pre_tool_use(agents_ib, repo, "bystander", "Bash", command="ls -la") is None
    assert len(runaways(rds, keys)) == 1  # the refused calls are not counted again
    assert f"held:      {refused}\n" in agents_ib.run("info", AGENT).stdout

    done = agents_ib.run("budget", "continue", AGENT)
    assert (done.returncode, done.stdout) == (0, f"{AGENT} goes on\n"), done.stderr
    assert pre_tool_use(agents_ib, repo, AGENT, "Bash", command="ls -la") is None  # forgotten: one of six
    for _ in range(REPEATS - 1):
        pre_tool_use(agents_ib, repo, AGENT, "Bash", command="ls -la")
    retry_until(lambda: len(runaways(rds, keys)) == 2, 20, 0.05, "a second loop told")

    again = agents_ib.run("budget", "raise", AGENT)
    assert again.returncode != 0
    assert again.stderr.strip().splitlines() == [
        f"ib budget: error: {AGENT} is not paused by a budget (the watchdog paused it: ib budget continue)"
    ]


def test_calls_that_differ_are_no_loop(
    agents_ib: IbRunner, worker: Worker, repo: Path, rds: redis.Redis, keys: Keys
) -> None:
    (repo / ".ib" / "agents" / AGENT).mkdir(parents=True)
    for n in range(2 * REPEATS):
        command = "pytest -q" if n % 2 else f"edit step {n}"
        assert pre_tool_use(agents_ib, repo, AGENT, "Bash", command=command) is None
    stream = keys.tool_calls(agents_ib.env["IB_WORKER_ID"])
    retry_until(
        lambda: watchdog_read(rds, stream) == 2 * REPEATS, 20, 0.05, "the watchdog to read every call"
    )
    assert runaways(rds, keys) == []


def _plan_call(ib: IbRunner, root: Path, transcript: Path, call_id: str) -> str:
    """ExitPlanMode through the hook as Claude Code 2.1.332 runs it: `tool_input` empty, the plan only in
    the transcript (under the call's id); the hook's output."""
    payload = {
        "hook_event_name": "PreToolUse",
        "tool_name": "ExitPlanMode",
        "tool_input": {},
        "tool_use_id": call_id,
        "transcript_path": str(transcript),
        "cwd": str(root),
    }
    env = {"IB_AGENT_ID": AGENT, "IB_ROOT": str(root), "IB_AGENT_ROLE": "worker"}
    done = ib.run("hook", "pre-tool-use", stdin=json.dumps(payload), env=env)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.parametrize(
    ("plans", "paused"), [(6, False), (1, True)], ids=["six-plans", "one-plan-six-times"]
)
def test_plans_are_told_apart_by_the_plan_in_the_transcript(
    agents_ib: IbRunner, worker: Worker, repo: Path, rds: redis.Redis, keys: Keys, plans: int, paused: bool
) -> None:
    (repo / ".ib" / "agents" / AGENT).mkdir(parents=True)
    transcript = repo.parent / "session.jsonl"
    for n in range(REPEATS):
        plan = f"1. Add flag {n % plans}\n2. Test it"
        block = {"type": "tool_use", "id": f"toolu_{n}", "name": "ExitPlanMode", "input": {"plan": plan}}
        with transcript.open("a") as f:
            f.write(
                json.dumps({"type": "assistant", "message": {"role": "assistant", "content": [block]}}) + "\n"
            )
        assert _plan_call(agents_ib, repo, transcript, f"toolu_{n}") == ""
    stream = keys.tool_calls(agents_ib.env["IB_WORKER_ID"])
    retry_until(lambda: watchdog_read(rds, stream) == REPEATS, 20, 0.05, "the watchdog to read every call")
    if not paused:
        assert runaways(rds, keys) == []
        return
    (event,) = retry_until(lambda: runaways(rds, keys), 20, 0.05, "the runaway event")
    assert (
        event["msg"]
        == f"{AGENT} paused: the same call 6 times in a row: ExitPlanMode: 1. Add flag 0 2. Test it"
    )


def test_the_hook_lets_calls_through_when_the_bus_is_out_of_reach(ib: IbRunner, repo: Path) -> None:
    (repo / ".ib" / "agents" / AGENT).mkdir(parents=True)
    ib.env.update({"IB_REDIS_URL": "redis://127.0.0.1:1/0", "IB_WORKER_ID": f"w-{uuid.uuid4().hex[:6]}"})
    assert pre_tool_use(ib, repo, AGENT, "Bash", command="ls") is None


def test_a_quiet_turn_and_a_fast_burn_pause_a_working_agent(
    repo: Path, redis_url: str, namespace: str, rds: redis.Redis, keys: Keys
) -> None:
    """The watchdog's slow look, in this process on the real bus: a turn with nothing new for
    IB_RUNAWAY_QUIET_MINUTES, and fresh tokens over IB_RUNAWAY_TOKENS_PER_MINUTE, each pause their agent
    once; an agent that is not working is left alone."""
    settings = Settings(
        redis_url=redis_url, namespace=namespace, worker_id="w-look", runaway_quiet_minutes=10
    )
    rt = Runtime(settings, client_for(redis_url), repo)
    watchdog = Watchdog(rt, client_for(redis_url, blocking=True), threading.Event())
    now = time.time()
    store = AgentStore(rds, keys)
    store.save(Agent(id="quiet", worker="w-look", state="working", state_at=now - 11 * 60))
    store.save(Agent(id="burner", worker="w-look", state="working", state_at=now))
    store.save(Agent(id="resting", worker="w-look", state="waiting", state_at=now - 3600))
    usage_store.append(rds, keys, "burner", "", [Usage("claude-sonnet-4-5", now - 60, input=3_000_000)])
    watchdog.look()
    watchdog.look()  # a second look tells nothing new
    told = {e["agent"]: e["data"] for e in runaways(rds, keys)}
    assert set(told) == {"quiet", "burner"}
    assert told["quiet"]["rule"] == "quiet"
    assert told["quiet"]["reason"] == "no file change and no new text for 11 minutes of this turn"
    assert told["burner"]["rule"] == "burn"
    assert told["burner"]["reason"].startswith("600,000 fresh tokens a minute over the last 5 minutes")
    assert len(runaways(rds, keys)) == 2
    assert {a for a in ("quiet", "burner", "resting") if rds.exists(keys.hold(a))} == {"quiet", "burner"}
