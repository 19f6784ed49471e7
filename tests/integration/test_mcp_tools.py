"""The `ib mcp` tools that stand for review, resume, task done, /auto and limits, through a real MCP client
session against a real Redis, the fake agent and a running worker: each does what its `ib` command does
(the same records), and its refusals are the command's lines."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis

from bus.costs.usage_limits import Reset
from bus.stores.limit_store import LimitStore
from bus.wire.keys import Keys
from tests.bot_process import Worker
from tests.cli import IbRunner
from tests.mcp_client import McpClient, served
from tests.waiting import retry_until

TIMEOUT = 60.0


@pytest.fixture
def client(agents_ib: IbRunner, tmp_path: Path) -> Iterator[McpClient]:
    with served(agents_ib, tmp_path) as session:
        yield session


def _cli_json(ib: IbRunner, *args: str) -> Any:
    done = ib.run(*args)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.mark.timeout(180)
def test_review_comments_go_to_the_agent_as_one_prompt_and_resume_lets_a_paused_agent_go_on(
    client: McpClient, agents_ib: IbRunner, running_worker: Worker, tmp_path: Path
) -> None:
    steps = ["Paint it.", "fake: write shed.txt red\\nwood", "fake: commit paint", "fake: wait"]
    client.ok("spawn", goal="\n".join(steps), name="painter")
    retry_until(lambda: "shed.txt" in client.ok("diff", agent="painter", stat=True)["diff"], TIMEOUT)

    kept = client.ok("review_comment", agent="painter", file="shed.txt", comment="blue, not red", lines="1")
    assert kept["kept"] == {"comment": "about `shed.txt` (lines 1–1 as shown): blue, not red", "waiting": 1}
    assert kept["sent"] is None
    again = client.ok("review_comment", agent="painter", file="1", comment="and oak")  # by its number
    assert again["kept"] == {"comment": "about `shed.txt` (lines 1–2 as shown): and oak", "waiting": 2}
    sent = client.ok("review_comment", agent="painter", request_changes=True)["sent"]
    assert "blue, not red" in sent and "and oak" in sent
    retry_until(lambda: "and oak" in (tmp_path / "received.txt").read_text(), TIMEOUT, what="the prompt")
    nothing = client.error("review_comment", agent="painter", request_changes=True)
    assert nothing.startswith("no comments waiting for painter")

    assert client.error("resume", agent="painter") == "painter is running and not paused; nothing to resume"
    assert agents_ib.run("pause", "painter").returncode == 0
    assert client.ok("resume", agent="painter") == {"agent": "painter", "done": "resumed painter"}


def test_task_done_finishes_a_held_task_and_says_what_became_ready(
    client: McpClient, agents_ib: IbRunner
) -> None:
    client.ok("task_add", title="Design it", task_id="design")
    client.ok("task_add", title="Build it", task_id="build", after=["design"])
    assert agents_ib.run("task", "claim").stdout.strip() == "design"
    done = client.ok("task_done", task="design", summary="drawn on paper")
    assert done == {"task": "design", "done": True, "now_ready": ["build"]}
    shown = client.ok("task_show", task="design")
    assert shown["status"] == "done"
    assert _cli_json(agents_ib, "task", "show", "design", "--json")["status"] == "done"


def test_a_task_whose_tests_fail_is_failed_instead(client: McpClient, agents_ib: IbRunner) -> None:
    added = agents_ib.run("task", "add", "Check it", "--id", "check", "--test-cmd", "echo broken; exit 3")
    assert added.returncode == 0, added.stderr
    assert agents_ib.run("task", "claim").stdout.strip() == "check"
    error = client.error("task_done", task="check")
    assert error.startswith("tests failed, so check is not done: ") and "\n" not in error
    assert client.ok("task_show", task="check")["status"] == "ready"  # back to ready: attempts remain


@pytest.mark.timeout(180)
def test_auto_start_runs_a_projects_tasks_and_auto_status_follows_it(
    client: McpClient, agents_ib: IbRunner, running_worker: Worker
) -> None:
    assert client.ok("auto_status") == {"loops": []}
    client.ok(
        "task_add", title="The one thing", task_id="one", project="solo", body="Do it.\nfake: done Did it"
    )
    cursor = client.ok("wait_for_events", timeout=0)["cursor"]
    started = client.ok("auto_start", project="solo")
    assert (started["project"], started["status"]) == ("solo", "running")
    ended: list[str] = []
    while "auto_finished" not in ended:
        got = client.ok("wait_for_events", cursor=cursor, types=["auto_finished"], timeout=TIMEOUT)
        assert got["events"], "the loop did not finish"
        ended, cursor = [e["type"] for e in got["events"]], got["cursor"]
    loops = client.ok("auto_status", project="solo")["loops"]
    assert [(s["status"], s["done"]) for s in loops] == [("finished", ["one"])]
    assert loops == _cli_json(agents_ib, "auto", "status", "--project", "solo", "--json")


def test_limits_lists_each_limited_account_as_ib_limits_does(
    client: McpClient, agents_ib: IbRunner, rds: redis.Redis, keys: Keys
) -> None:
    assert client.ok("limits") == {"limits": []}
    client.ok("spawn", goal="fake: wait", name="parked", role="worker")
    now = time.time()
    LimitStore(rds, keys).park("acct", "parked", Reset(now + 3600, "header"), "five_hour", now)
    got = client.ok("limits")
    assert [(x["account"], x["agents"]) for x in got["limits"]] == [("acct", ["parked"])]
    assert got == _cli_json(agents_ib, "limits", "--json")


@pytest.mark.parametrize(
    ("tool", "arguments", "cli"),
    [
        ("task_done", {"task": "nope"}, ("task", "done", "nope")),
        ("resume", {"agent": "ghost"}, ("resume", "ghost")),
        ("review_comment", {"agent": "ghost", "request_changes": True},
         ("review", "ghost", "--request-changes")),
        ("auto_start", {"project": "p", "on": "Bad Worker"},
         ("auto", "--project", "p", "--on", "Bad Worker")),
    ],
    ids=["task-done-missing", "resume-ghost", "review-nothing-waiting", "auto-bad-worker"],
)  # fmt: skip
def test_a_refusal_is_the_commands_line(
    client: McpClient, agents_ib: IbRunner, tool: str, arguments: dict[str, Any], cli: tuple[str, ...]
) -> None:
    said = agents_ib.run(*cli)
    assert said.returncode != 0
    assert client.error(tool, **arguments) == said.stderr.strip().split(": error: ", 1)[1]


@pytest.mark.parametrize(
    ("tool", "arguments", "says"),
    [
        ("auto_start", {"project": "p", "max_tasks": -1}, "max_tasks"),
        ("task_done", {"task": "t", "test_timeout": 0}, "test_timeout"),
        ("review_comment", {"agent": "a", "comment": "x"}, "name the file the comment is about"),
        ("review_comment", {"agent": "a"}, "give a comment on a file to keep, or request_changes"),
    ],
    ids=["negative-max-tasks", "zero-test-timeout", "comment-without-file", "nothing-asked"],
)
def test_bad_arguments_are_tool_errors(
    client: McpClient, tool: str, arguments: dict[str, Any], says: str
) -> None:
    assert says in client.error(tool, **arguments)
    assert client.ok("limits") == {"limits": []}  # the server stays up
