"""What the /auto loop tells agents: a task's goal, the next task for the project's agent, a merge agent's."""

from __future__ import annotations

import pytest

from bus.tasks.task_model import Note, Task
from worker.auto.prompts import merge_again, merge_goal, task_goal, task_message


def task(body: str = "", notes: tuple[Note, ...] = ()) -> Task:
    return Task(
        id="impl",
        project="backend",
        title="Add the endpoints",
        body=body,
        priority=7,
        status="claimed",
        attempt=1,
        max_attempts=3,
        created_at=0,
        notes=notes,
    )


HANDOFF = Note(kind="handoff", text="use the JWT helper in auth.py", ts=1, source_task="design")
OWN = Note(kind="test_failure", text="2 tests failed", ts=2, source_task="impl")


@pytest.mark.parametrize(
    ("given", "goal"),
    [
        (task(), "Add the endpoints"),
        (task("  GET /login\n"), "Add the endpoints\n\nGET /login"),
        (
            task("Body.", (HANDOFF, OWN)),
            "Add the endpoints\n\nBody.\n\n[CONTEXT FROM EARLIER TASKS]\n"
            "- handoff from design: use the JWT helper in auth.py",
        ),
    ],
    ids=["title-only", "body-trimmed", "notes-of-dependencies-only"],
)
def test_task_goal(given: Task, goal: str) -> None:
    assert task_goal(given) == goal


def test_task_message_says_how_to_finish() -> None:
    text = task_message(task("fake: done"))
    assert text.startswith("[TASK impl] Add the endpoints\n\nfake: done\n")
    assert 'ib task done impl --summary "one line on what you did"' in text
    assert 'ib task fail impl --reason "why"' in text
    assert text.endswith("I HAVE COMPLETED THE GOAL")


@pytest.mark.parametrize(
    ("custom", "tail"),
    [
        ("", "merges your branch into main."),
        ("run make test\n", "[CUSTOM MERGE INSTRUCTIONS]\nrun make test"),
    ],
    ids=["plain", "with-custom-instructions"],
)
def test_merge_goal(custom: str, tail: str) -> None:
    text = merge_goal(
        task="impl",
        title="Add the endpoints",
        source="impl",
        branch="agent/impl",
        target="main",
        files=["api.txt", "b/c.txt"],
        custom=custom,
    )
    assert text.startswith("Resolve a merge conflict for task impl (Add the endpoints).")
    assert "Conflicted files:\n  - api.txt\n  - b/c.txt\n" in text
    assert "git cherry-pick main..agent/impl" in text
    assert text.endswith(tail)


def test_merge_again_names_the_files_and_the_rebase() -> None:
    text = merge_again("main", ["api.txt"])
    assert (
        "  - api.txt\n" in text and "git rebase main" in text and text.endswith("I HAVE COMPLETED THE GOAL.")
    )
