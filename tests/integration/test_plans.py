"""Plan → tasks for real: `ib plan` starts a fake planner agent in tmux whose script writes plan.json; the
plan is validated, printed as a tree, kept as a draft or added; bad answers add nothing."""

from __future__ import annotations

import json
from typing import Any

import redis

from bus.wire.keys import Keys
from tests.cli import IbRunner

THREE = json.dumps(
    {
        "tasks": [
            {"id": "design-auth", "title": "Design the auth module", "priority": 8},
            {"id": "impl", "title": "Implement it", "after": ["design-auth"], "test_cmd": "true"},
            {"id": "docs", "title": "Document it", "priority": 2, "after": ["impl"]},
        ]
    }
)


def planner(*steps: str) -> str:
    return "\n".join(["Plan the auth work.", *steps])


def task_ids(ib: IbRunner) -> list[str]:
    return sorted(t["id"] for t in json.loads(ib.run("task", "list", "--all", "--json").stdout))


def plans(ib: IbRunner) -> list[dict[str, Any]]:
    loaded: list[dict[str, Any]] = json.loads(ib.run("plans", "--json").stdout)
    return loaded


def test_plan_yes_adds_the_tasks(agents_ib: IbRunner, rds: redis.Redis, keys: Keys) -> None:
    done = agents_ib.run("plan", planner(f"fake: write plan.json {THREE}", "fake: done"), "--yes")
    assert done.returncode == 0, done.stderr
    assert "design-auth (p8) Design the auth module\n└─ impl (p5) Implement it · test: true\n" in done.stdout
    assert "plan-1 approved: 3 tasks added: design-auth, impl, docs" in done.stdout
    assert task_ids(agents_ib) == ["design-auth", "docs", "impl"]
    (draft,) = plans(agents_ib)
    assert draft["status"] == "approved"
    assert draft["agent"] not in agents_ib.run("list").stdout  # the planner was stopped


def test_a_draft_is_edited_then_approved_and_adds_nothing_before(agents_ib: IbRunner) -> None:
    one = json.dumps({"tasks": [{"id": "only", "title": "Only task"}]})
    done = agents_ib.run("plan", planner(f"fake: write plan.json {one}", "fake: done"))
    assert done.returncode == 0, done.stderr
    assert "only (p5) Only task" in done.stdout and "ib plan-approve plan-1" in done.stdout
    assert task_ids(agents_ib) == []
    assert plans(agents_ib)[0]["status"] == "ready"
    edited = agents_ib.run("plan-edit", "plan-1", f"fake: write plan.json {THREE}\nfake: done")
    assert edited.returncode == 0, edited.stderr
    assert "docs (p2) Document it" in edited.stdout and task_ids(agents_ib) == []
    approved = agents_ib.run("plan-approve", "plan-1")
    assert approved.returncode == 0, approved.stderr
    assert task_ids(agents_ib) == ["design-auth", "docs", "impl"]
    again = agents_ib.run("plan-discard", "plan-1")
    assert again.returncode == 1 and "plan-1 is approved, so it cannot be discarded" in again.stderr


def test_the_planner_shows_the_persons_goal_not_its_instructions(agents_ib: IbRunner) -> None:
    one = json.dumps({"tasks": [{"id": "only", "title": "Only task"}]})
    goal = planner(f"fake: write plan.json {one}", "fake: done")
    assert agents_ib.run("plan", goal).returncode == 0
    (draft,) = plans(agents_ib)
    (agent,) = [a for a in json.loads(agents_ib.run("list", "--json").stdout) if a["id"] == draft["agent"]]
    assert agent["goal"] == goal  # in `ib list`, the dashboard and Telegram
    assert "You are a planner" not in agents_ib.run("list").stdout
    told = agents_ib.cwd / ".ib" / "agents" / draft["agent"] / "prompt.txt"
    assert "You are a planner" in told.read_text()  # what it was told


def test_bad_answers_add_nothing(agents_ib: IbRunner) -> None:
    cycle = json.dumps(
        {"tasks": [{"id": "a", "title": "A", "after": ["b"]}, {"id": "b", "title": "B", "after": ["a"]}]}
    )
    four = json.dumps({"tasks": [{"id": f"t{i}", "title": "T"} for i in range(4)]})
    cases = [
        (planner("fake: write plan.json {not json", "fake: done"), {}, "not valid JSON"),
        (planner(f"fake: write plan.json {cycle}", "fake: done"), {}, "the plan has a cycle: a → b → a"),
        (
            planner(f"fake: write plan.json {four}", "fake: done"),
            {"IB_PLAN_MAX_TASKS": "3"},
            "more than the 3",
        ),
        (planner("fake: wait"), {}, "ended its turn without writing plan.json"),
        (planner("fake: sleep 60"), {"IB_PLAN_TIMEOUT": "3"}, "the planner gave no answer within 3 s"),
    ]
    for goal, env, reason in cases:
        done = agents_ib.run("plan", goal, "--yes", env=env)
        assert done.returncode == 1, (reason, done.stdout, done.stderr)
        assert reason in done.stderr and "nothing was added" in done.stderr, done.stderr
        assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert task_ids(agents_ib) == []
    assert [p["status"] for p in plans(agents_ib)] == ["failed"] * 5
