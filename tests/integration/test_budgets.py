"""Budgets that act, with `ib worker` running and the real hook entry point: the worker reads an agent's
transcript (answers with their usage, as Claude Code writes them), sends one `budget_warning` at 80 % and
one `budget_exceeded` at 100 %, and the agent's PreToolUse hook then refuses every call with the reason
until `ib budget raise` lifts the pause. Bad budgets (0, negative, not a number, unknown unit) are refused
in one line and nothing is stored."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import redis

from bus.stores.agent_store import Agent, AgentStore
from bus.wire.keys import Keys
from tests.bot_process import Worker, worker_running
from tests.cli import IbRunner
from tests.streams import stream_entries
from tests.tool_calls import pre_tool_use
from tests.waiting import retry_until

AGENT = "spender"
SONNET = "claude-sonnet-4-5"  # $3 per million input tokens, $15 per million output


@pytest.fixture
def worker(agents_ib: IbRunner, tmp_path: Path, rds: redis.Redis, keys: Keys) -> Iterator[Worker]:
    with worker_running(agents_ib, tmp_path / "worker.log", rds, keys) as running:
        yield running


def events(rds: redis.Redis, keys: Keys, kind: str) -> list[dict[str, Any]]:
    return [e for _i, f in stream_entries(rds, keys.events) if (e := json.loads(f["e"]))["type"] == kind]


def answer(transcript: Path, input_tokens: int, output_tokens: int) -> None:
    """One model answer as Claude Code writes it to the transcript, with its usage."""
    message_id = f"msg_{uuid.uuid4().hex[:12]}"
    entry = {
        "type": "assistant",
        "uuid": str(uuid.uuid4()),
        "requestId": f"req_{uuid.uuid4().hex[:12]}",
        "timestamp": datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z"),
        "message": {
            "id": message_id,
            "role": "assistant",
            "model": SONNET,
            "content": [{"type": "text", "text": "working on it"}],
            "usage": {
                "input_tokens": input_tokens,
                "output_tokens": output_tokens,
                "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 0,
            },
        },
    }
    with transcript.open("a", encoding="utf-8") as f:
        f.write(json.dumps(entry) + "\n")


def spent(ib: IbRunner, scope: str, target: str) -> float:
    listed = json.loads(ib.run("budget", "list", "--json").stdout)
    return next((b["spent"] for b in listed if (b["scope"], b["target"]) == (scope, target)), -1.0)


def test_an_agent_over_its_budget_is_paused_at_its_next_call_until_raised(
    agents_ib: IbRunner, worker: Worker, repo: Path, rds: redis.Redis, keys: Keys, tmp_path: Path
) -> None:
    transcript = tmp_path / "spender.jsonl"
    transcript.touch()
    (repo / ".ib" / "agents" / AGENT).mkdir(parents=True)  # where its agent.log goes
    added = agents_ib.run("task", "add", "Paint the shed", "--id", "paint", "--budget", "10M")
    assert added.returncode == 0, added.stderr
    AgentStore(rds, keys).save(
        Agent(
            id=AGENT,
            project="shed",
            task="paint",
            worker=agents_ib.env["IB_WORKER_ID"],
            session=f"{AGENT}-gone",
            state="working",
            transcript_path=str(transcript),
        )
    )
    done = agents_ib.run("budget", "set", "--agent", AGENT, "1$")
    assert (done.returncode, done.stdout) == (0, f"agent {AGENT} budget: $1.00\n"), done.stderr

    answer(transcript, 100_000, 10_000)  # $0.45: 45 %
    retry_until(lambda: spent(agents_ib, "agent", AGENT) == pytest.approx(0.45), 20, 0.1, "the first answer")
    assert pre_tool_use(agents_ib, repo, AGENT, "Bash", command="ls") is None
    assert events(rds, keys, "budget_warning") == []

    answer(transcript, 100_000, 10_000)  # $0.90: 90 %
    (warning,) = retry_until(lambda: events(rds, keys, "budget_warning"), 20, 0.1, "the warning")
    assert warning["agent"] == AGENT and warning["task"] == "paint"
    assert warning["data"]["scope"] == "agent" and warning["data"]["share"] == pytest.approx(0.9)
    assert pre_tool_use(agents_ib, repo, AGENT, "Bash", command="ls") is None  # a warning pauses nobody

    answer(transcript, 100_000, 10_000)  # $1.35: 135 %
    (exceeded,) = retry_until(lambda: events(rds, keys, "budget_exceeded"), 20, 0.1, "the pause")
    assert exceeded["msg"] == f"{AGENT} used up the agent {AGENT} budget of $1.00: $1.35 spent (135%)"
    assert exceeded["data"]["raise_by"] == "$1.00"
    reason = retry_until(lambda: pre_tool_use(agents_ib, repo, AGENT, "Bash", command="ls"), 20, 0.1)
    assert "Paused by ittybus: the agent spender budget of $1.00: $1.35 spent (135%)" in reason
    assert pre_tool_use(agents_ib, repo, AGENT, "Read", file_path="README.md") == reason  # every tool
    assert "[PreToolUse] Paused by ittybus" in (repo / ".ib" / "agents" / AGENT / "agent.log").read_text()
    assert pre_tool_use(agents_ib, repo, "bystander", "Bash", command="ls") is None  # only the one agent

    raised = agents_ib.run("budget", "raise", AGENT, "1$")
    assert raised.stdout == f"the agent {AGENT} budget is now $2.00 ($1.35 spent); {AGENT} goes on\n"
    assert pre_tool_use(agents_ib, repo, AGENT, "Bash", command="ls") is None
    assert len(events(rds, keys, "budget_exceeded")) == 1  # the refused calls sent nothing more

    again = agents_ib.run("budget", "raise", AGENT)
    assert again.returncode != 0
    assert again.stderr.strip().splitlines() == [
        f"ib budget: error: {AGENT} is not paused by a budget (it is not paused)"
    ]
    listed = json.loads(agents_ib.run("budget", "list", "--json").stdout)
    assert {(b["scope"], b["target"], b["limit"]) for b in listed} == {
        ("agent", AGENT, 2.0),
        ("task", "paint", 10_000_000),
    }
    assert next(b for b in listed if b["scope"] == "task")["spent"] == 330_000  # tokens, the three answers


BAD = [
    ("zero", "0$", "budget '0$' must be more than 0 (to stop an agent, use ib kill)"),
    ("negative", "-5", "budget '-5' must be more than 0 (to stop an agent, use ib kill)"),
    ("word", "lots$", "budget 'lots$' is not a number: write dollars as 2.50$"),
    ("unit", "5€", "budget '5€' has an unknown unit '€': write dollars as 2.50$"),
]


@pytest.mark.parametrize(("amount", "said"), [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_a_bad_budget_is_refused_in_one_line_and_nothing_stored(
    ib: IbRunner, rds: redis.Redis, keys: Keys, amount: str, said: str
) -> None:
    for args in (
        ("budget", "set", "--day", amount),
        ("task", "add", "Paint", "--id", "paint", "--budget", amount),
    ):
        done = ib.run(*args)
        assert done.returncode != 0
        (line,) = done.stderr.strip().splitlines()
        assert said in line
    assert rds.smembers(keys.budgets) == set()
    assert not rds.exists(keys.task("paint"))
    set_badly = ib.run("budget", "list", env={"IB_DAY_BUDGET": amount})
    assert set_badly.returncode != 0
    (line,) = set_badly.stderr.strip().splitlines()
    assert "IB_DAY_BUDGET" in line and said in line


def test_budget_commands_refuse_what_names_nothing(ib: IbRunner) -> None:
    for args, said in (
        (("budget", "set", "--agent", "nobody", "1$"), "no agent 'nobody': see `ib list`"),
        (("budget", "set", "--task", "nothing", "1$"), "no task 'nothing': see `ib task list`"),
        (("budget", "set", "1$"), "give one of --agent AGENT, --task TASK and --day"),
        (
            ("budget", "set", "--day", "--agent", "a", "1$"),
            "give one of --agent AGENT, --task TASK and --day",
        ),
        (("budget", "raise", "nobody"), "nobody is not paused by a budget (it is not paused)"),
        (("budget", "continue", "nobody"), "no agent 'nobody'"),
    ):
        done = ib.run(*args)
        assert done.returncode != 0
        (line,) = done.stderr.strip().splitlines()
        assert said in line
