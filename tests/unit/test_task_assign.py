"""Why a task cannot go to a new agent, and the goal an agent given only a task gets."""

from __future__ import annotations

import pytest

from bus.tasks.task_model import Task
from worker.tasks.assign import refusal, task_goal


def task(status: str, **more: object) -> Task:
    base: dict[str, object] = {
        "id": "paint",
        "project": "p",
        "title": "Paint the shed",
        "body": "",
        "priority": 5,
        "status": status,
        "attempt": 0,
        "max_attempts": 3,
        "created_at": 0,
    }
    base.update(more)
    return Task(**base)


REFUSALS = {
    "claimed": (
        task("claimed", claimed_by="other"),
        "claimed by other, not a1: `ib task release paint` first",
    ),
    "pending": (task("pending", after=("prime", "sand")), "pending (it waits for prime, sand)"),
    "draft": (task("draft"), "publish it first with `ib task edit paint --publish`"),
    "done": (task("done"), "task paint is done: there is nothing left"),
    "failed": (task("failed"), "task paint is failed: there is nothing left"),
}


@pytest.mark.parametrize(("given", "says"), REFUSALS.values(), ids=REFUSALS.keys())
def test_refusal_says_why_and_what_to_do(given: Task, says: str) -> None:
    assert says in refusal(given, "a1")


@pytest.mark.parametrize(
    ("body", "goal"),
    [("", "Paint the shed"), ("  Blue.\n", "Paint the shed\n\nBlue.")],
    ids=["title-only", "title-and-body"],
)
def test_task_goal(body: str, goal: str) -> None:
    assert task_goal(task("ready", body=body)) == goal
