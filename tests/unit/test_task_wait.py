"""Which events wake a waiting claimer: of its own project, a task made ready, or a task or merge that ended
(which may let go of a task held for overlapping it); nothing else."""

from __future__ import annotations

import json

import pytest

from bus.events.envelope import make_event
from bus.tasks.task_wait import wakes


def entry(type_: str, project: str | None) -> dict[str, str]:
    return {"e": json.dumps(make_event(type_, "x", project=project, task="t"))}


CASES = {
    "ready-here": (entry("task_ready", "backend"), True),
    "ready-elsewhere": (entry("task_ready", "frontend"), False),
    "done-here": (entry("task_done", "backend"), True),
    "merged-here": (entry("merge_merged", "backend"), True),
    "merged-elsewhere": (entry("merge_merged", "frontend"), False),
    "claimed-here": (entry("task_claimed", "backend"), False),
    "no-project": (entry("task_ready", None), False),
    "garbage": ({"e": '{"task_ready" broken'}, False),
    "no-field": ({}, False),
}


@pytest.mark.parametrize(("fields", "expected"), CASES.values(), ids=CASES.keys())
def test_wakes(fields: dict[str, str], expected: bool) -> None:
    assert wakes(fields, "backend") is expected
