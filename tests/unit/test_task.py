"""`Task` and `Note` as plain data, and the checks on what people type into a task."""

from __future__ import annotations

import json

import pytest

from bus.errors import Conflict, InvalidInput
from bus.tasks.task_model import (
    Note,
    Task,
    check_after,
    check_max_attempts,
    check_note_kind,
    check_priority,
    check_status,
    check_test_cmd,
    check_text,
    check_title,
)
from bus.tasks.task_store import script_refusal

FULL = {
    "id": "design-auth",
    "project": "backend",
    "title": "Design auth",
    "body": "JWT or sessions?",
    "priority": "8",
    "status": "claimed",
    "attempt": "2",
    "max_attempts": "3",
    "created_at": "1700000000000",
    "claimed_by": "agent-1",
    "claimed_at": "1700000001000",
    "test_cmd": "pytest -q",
    "seq": "1",
}
NOTE = json.dumps({"kind": "result", "text": "done it", "ts": 1700000002000, "source_task": "spec"})


def test_from_hash_reads_every_field() -> None:
    task = Task.from_hash(FULL, after=["spec", "api"], notes=[NOTE])
    assert task == Task(
        id="design-auth",
        project="backend",
        title="Design auth",
        body="JWT or sessions?",
        priority=8,
        status="claimed",
        attempt=2,
        max_attempts=3,
        created_at=1700000000000,
        claimed_by="agent-1",
        claimed_at=1700000001000,
        done_at=None,
        test_cmd="pytest -q",
        summary=None,
        after=("api", "spec"),
        notes=(Note(kind="result", text="done it", ts=1700000002000, source_task="spec"),),
    )


def test_from_hash_defaults_for_missing_fields() -> None:
    task = Task.from_hash({"id": "t", "project": "p"})
    assert (task.priority, task.status, task.attempt, task.max_attempts) == (5, "pending", 0, 3)
    assert (task.claimed_by, task.claimed_at, task.done_at, task.summary, task.test_cmd) == (None,) * 5
    assert task.after == () and task.notes == ()


def test_to_json_round_trips_through_json() -> None:
    task = Task.from_hash(FULL, after=["spec"], notes=[NOTE])
    body = json.loads(task.to_json())
    assert body["id"] == "design-auth" and body["priority"] == 8 and body["after"] == ["spec"]
    assert body["notes"] == [json.loads(NOTE)]
    assert body["done_at"] is None


@pytest.mark.parametrize("value", [0, 5, 10], ids=["lowest", "default", "highest"])
def test_priority_in_range(value: int) -> None:
    assert check_priority(value) == value


@pytest.mark.parametrize(
    "value",
    [11, -1, "high", "5", 5.0, True, None],
    ids=["11", "-1", "word", "digit-text", "float", "bool", "none"],
)
def test_priority_refused(value: object) -> None:
    with pytest.raises(InvalidInput, match=r"bad priority .*whole number from 0 to 10"):
        check_priority(value)


@pytest.mark.parametrize("value", [0, 101, "3", False], ids=["zero", "too-many", "text", "bool"])
def test_max_attempts_refused(value: object) -> None:
    with pytest.raises(InvalidInput, match="max_attempts"):
        check_max_attempts(value)


@pytest.mark.parametrize(
    ("title", "match"),
    [
        ("", "needs a title"),
        ("   ", "needs a title"),
        ("two\nlines", "one line"),
        ("x" * 201, "201 characters"),
    ],
    ids=["empty", "blank", "two-lines", "too-long"],
)
def test_title_refused(title: str, match: str) -> None:
    with pytest.raises(InvalidInput, match=match):
        check_title(title)


def test_title_is_stripped() -> None:
    assert check_title("  Design auth ") == "Design auth"


def test_text_limit_counts_utf8_bytes() -> None:
    assert check_text("body", "\u00e9" * 5, 10) == "\u00e9" * 5
    with pytest.raises(InvalidInput, match=r"the body is 12 bytes; the limit is 10 bytes"):
        check_text("body", "\u00e9" * 6, 10)


def test_text_may_be_required() -> None:
    with pytest.raises(InvalidInput, match="the note is empty"):
        check_text("note", "  ", 100, allow_empty=False)


@pytest.mark.parametrize(
    ("value", "expected"),
    [(None, None), ("  ", None), (" pytest -q ", "pytest -q")],
    ids=["none", "blank", "stripped"],
)
def test_test_cmd(value: str | None, expected: str | None) -> None:
    assert check_test_cmd(value) == expected


def test_test_cmd_is_one_line() -> None:
    with pytest.raises(InvalidInput, match="one line"):
        check_test_cmd("make\nrm -rf /")


def test_note_kind_and_status_are_from_their_lists() -> None:
    assert check_note_kind("handoff") == "handoff"
    assert check_status("draft") == "draft"
    with pytest.raises(InvalidInput, match="observation, result, handoff, test_failure"):
        check_note_kind("inherited")
    with pytest.raises(InvalidInput, match="draft, pending, ready, claimed, done, failed"):
        check_status("blocked")


def test_after_drops_repeats_and_refuses_itself() -> None:
    assert check_after("c", ["a", "b", "a"]) == ["a", "b"]
    assert check_after(None, ["a"]) == ["a"]
    with pytest.raises(InvalidInput, match="'c' cannot depend on itself"):
        check_after("c", ["a", "c"])


@pytest.mark.parametrize(
    "reply",
    [
        "IB_CONFLICT task x is done script: f6974220, on @user_script:1.",
        "Error running script (call to f_f6974220): @user_script:1: IB_CONFLICT task x is done",
        "IB_CONFLICT task x is done script: on @user_script:38.",
    ],
    ids=["redis-7", "redis-6.2", "valkey-9"],
)
def test_script_refusals_read_the_same_on_every_server(reply: str) -> None:
    assert script_refusal(reply) == (Conflict, "task x is done")


def test_other_script_errors_are_not_refusals() -> None:
    assert script_refusal("ERR Error running script: attempt to index a nil value") is None
    assert script_refusal("IB_WHATEVER x") is None
