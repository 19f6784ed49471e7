"""The task scripts' text and calling convention, shared by TaskStore and the Stop hook."""

from __future__ import annotations

import pytest

from bus.tasks.task_lua import MARK, SCRIPTS, done_call, fixed_args, script_text, task_keys
from bus.wire.keys import Keys

K = Keys("ns:")


@pytest.mark.parametrize("name", SCRIPTS, ids=SCRIPTS)
def test_every_script_is_the_prelude_then_its_body(name: str) -> None:
    text = script_text(name)
    assert text.startswith("-- Shared head of every task script")
    assert "local function make_ready" in text and text.count("local EVENTS, TASKS, SEQ, CLAIMS") == 1


def test_an_unknown_script_is_refused() -> None:
    with pytest.raises(ValueError, match="no task script 'nope'"):
        script_text("nope")


def test_done_call_is_text_keys_and_args_in_the_scripts_order() -> None:
    text, keys, args = done_call(K, 5000, "design-auth", "agent-1", "JWT it is")
    assert text == script_text("done") and "already done" in text
    assert keys == [
        "ns:events",
        "ns:tasks",
        "ns:task-seq",
        "ns:task-claims",
        "ns:task:design-auth",
        "ns:task:design-auth:deps",
        "ns:task:design-auth:dependents",
        "ns:task:design-auth:notes",
    ]
    assert keys[4:] == task_keys(K, "design-auth")
    assert args[:7] == fixed_args(K, 5000)
    assert args[7:] == ["design-auth", "agent-1", "JWT it is"]


def test_templates_mark_where_the_id_goes() -> None:
    templates = fixed_args(K, 100)[:6]
    assert all(isinstance(t, str) and t.count(MARK) == 1 for t in templates)
    assert templates[0] == f"ns:task:{MARK}" and templates[4] == f"ns:ready:{MARK}"
    assert fixed_args(K, 100)[6] == 100
