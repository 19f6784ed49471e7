"""The planner's answer: parsed, refused with the reason, ordered and drawn as a tree."""

from __future__ import annotations

import json

import pytest

from bus.errors import InvalidInput
from bus.tasks.plans import find_cycle, parse_plan, render_tree


def tasks(*specs: tuple[str, list[str]]) -> str:
    return json.dumps({"tasks": [{"id": i, "title": f"Do {i}", "after": after} for i, after in specs]})


GOOD = json.dumps(
    {
        "tasks": [
            {"id": "design-auth", "title": "Design the auth module", "priority": 8, "after": []},
            {"id": "impl", "title": "Implement the endpoints", "priority": 7, "after": ["design-auth"]},
            {
                "id": "tests",
                "title": "Write the tests",
                "after": ["design-auth", "impl"],
                "test_cmd": "pytest",
            },
            {"id": "docs", "title": "Document it", "priority": 2},
        ]
    }
)


def test_a_good_plan_is_ordered_and_drawn() -> None:
    plan = parse_plan(GOOD)
    assert [t.id for t in plan.order()] == ["design-auth", "docs", "impl", "tests"]
    assert render_tree(plan) == "\n".join(
        [
            "design-auth (p8) Design the auth module",
            "├─ impl (p7) Implement the endpoints",
            "└─ tests (p5) Write the tests (also after impl) · test: pytest",
            "docs (p2) Document it",
        ]
    )


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("", "the planner wrote nothing"),
        ("{not json", "not valid JSON"),
        (
            '{"tasks": "many"}',
            "the plan does not have the expected shape: tasks: Input should be a valid list",
        ),
        ('{"tasks": [{"id": "a"}]}', "tasks.0.title: Field required"),
        ('{"tasks": [{"id": "Bad Id", "title": "x"}]}', "tasks.0.id"),
        ('{"tasks": [{"id": "a", "title": "x", "priority": 11}]}', "tasks.0.priority"),
        ('{"tasks": []}', "the plan has no tasks"),
        (tasks(("a", []), ("a", [])), "two tasks with the id a"),
        (tasks(("a", ["ghost"])), "task a depends on ghost, which is not in the plan"),
        (tasks(("a", ["b"]), ("b", ["c"]), ("c", ["a"])), "the plan has a cycle: a → b → c → a"),
        (tasks(("a", ["a"])), "the plan has a cycle: a → a"),
        (tasks(*[(f"t{i}", []) for i in range(500)]), "the plan has 500 tasks, more than the 100 allowed"),
    ],
    ids=[
        "empty",
        "json",
        "shape",
        "title",
        "id",
        "priority",
        "none",
        "dupe",
        "unknown",
        "cycle",
        "self",
        "500",
    ],
)
def test_refused_with_the_reason(text: str, reason: str) -> None:
    with pytest.raises(InvalidInput, match=reason.replace("(", r"\(")):
        parse_plan(text)


def test_a_bare_list_is_a_plan() -> None:
    assert len(parse_plan(json.dumps([{"id": "a", "title": "x"}])).tasks) == 1


def test_find_cycle_on_a_dag_is_empty() -> None:
    assert find_cycle({"a": ["b"], "b": ["c"], "c": [], "d": ["a", "c"]}) == []
