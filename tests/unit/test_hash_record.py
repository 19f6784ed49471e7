"""The one conversion between records and Redis hashes (bus/stores/hash_record.py): every kind of field both
ways, the hashes the code before it (and the hooks and Lua scripts) wrote, garbage, unknown keys, partial
updates."""

from __future__ import annotations

from typing import Any, ClassVar

import pytest
from pydantic import Field

from bus.errors import BadRecord, BusError
from bus.inbox.messages import Message
from bus.inbox.prompts import Prompt
from bus.inbox.questions import Question
from bus.stores.agent_store import Agent
from bus.stores.auto_state import AutoState
from bus.stores.hash_record import HashRecord
from bus.tasks.merge_request import MergeRequest
from bus.tasks.plan_store import PlanDraft
from bus.tasks.schedules import Schedule, TaskTemplate
from bus.tasks.task_model import Note, Task


class Inner(HashRecord):
    name: str
    size: int = 0


class Sample(HashRecord):
    hash_keys: ClassVar[dict[str, str]] = {"sender": "from"}

    id: str
    text: str = "default"
    count: int = 3
    ratio: float = 0.0
    flag: bool = False
    maybe_count: int | None = None
    maybe_text: str | None = None
    maybe_ratio: float | None = None
    items: tuple[str, ...] = ()
    table: dict[str, int] = Field(default_factory=dict)
    inner: Inner | None = None
    sender: str = ""


# (field, value, how the hash stores it)
KINDS = [
    ("str", "text", "héllo wörld", "héllo wörld"),
    ("str-empty", "text", "", ""),
    ("int", "count", 42, "42"),
    ("int-negative", "count", -7, "-7"),
    ("float", "ratio", 1.5, "1.5"),
    ("float-whole", "ratio", 2.0, "2.0"),
    ("float-epoch", "ratio", 1764134400.123456, "1764134400.123456"),
    ("bool-true", "flag", True, "1"),
    ("bool-false", "flag", False, "0"),
    ("optional-int-none", "maybe_count", None, ""),
    ("optional-int", "maybe_count", 0, "0"),
    ("optional-str-none", "maybe_text", None, ""),
    ("optional-str", "maybe_text", "x", "x"),
    ("optional-float", "maybe_ratio", 0.25, "0.25"),
    ("tuple", "items", ("a b", "ü"), '["a b", "ü"]'),
    ("tuple-empty", "items", (), "[]"),
    ("dict", "table", {"a": 1}, '{"a": 1}'),
    ("model", "inner", Inner(name="n", size=2), '{"name": "n", "size": 2}'),
    ("model-none", "inner", None, ""),
    ("renamed-key", "sender", "agent-1", "agent-1"),
]


@pytest.mark.parametrize(("field", "value", "stored"), [k[1:] for k in KINDS], ids=[k[0] for k in KINDS])
def test_every_kind_is_stored_as_the_string_and_read_back(field: str, value: object, stored: str) -> None:
    record = Sample(id="s", **{field: value})
    key = Sample.hash_key(field)
    assert record.to_hash()[key] == stored
    assert Sample.hash_fields(**{field: value}) == {key: stored}
    assert getattr(Sample.from_hash({"id": "s", key: stored}), field) == value
    assert Sample.from_hash(record.to_hash()) == record


# What a hash may hold that the writers above never write, and what it reads as (as the readers before did)
LENIENT = [
    ("empty-int-is-its-default", {"count": ""}, "count", 3),
    ("empty-float-is-its-default", {"ratio": ""}, "ratio", 0.0),
    ("empty-bool-is-false", {"flag": ""}, "flag", False),
    ("empty-tuple-is-its-default", {"items": ""}, "items", ()),
    ("empty-optional-str-is-none", {"maybe_text": ""}, "maybe_text", None),
    ("missing-str-is-its-default", {}, "text", "default"),
    ("float-with-three-decimals", {"ratio": "1764134400.123"}, "ratio", 1764134400.123),
    ("whole-number-float", {"ratio": "17"}, "ratio", 17.0),
    ("ascii-escaped-json", {"items": '["\\u00fc"]'}, "items", ("ü",)),
]


@pytest.mark.parametrize(
    ("stored", "field", "value"), [case[1:] for case in LENIENT], ids=[case[0] for case in LENIENT]
)
def test_what_older_writers_left_reads_as_before(stored: dict[str, str], field: str, value: object) -> None:
    assert getattr(Sample.from_hash({"id": "s", **stored}), field) == value


def test_keys_the_record_does_not_have_are_ignored() -> None:
    record = Sample.from_hash({"id": "s", "transcript_offset": "12", "outbox": "[]", "sender": "not the key"})
    assert record == Sample(id="s")


# (field's hash key, garbage) → the error names the key
GARBAGE = [
    ("int-text", "count", "many"),
    ("int-fraction", "count", "1.5"),
    ("float-text", "ratio", "soon"),
    ("bool-word", "flag", "perhaps"),
    ("optional-int-text", "maybe_count", "x"),
    ("tuple-not-json", "items", "[a, b"),
    ("tuple-of-numbers", "items", "[1, 2]"),
    ("tuple-an-object", "items", '{"a": 1}'),
    ("dict-a-list", "table", "[1]"),
    ("model-missing-field", "inner", '{"size": 1}'),
    ("model-not-json", "inner", "{"),
]


@pytest.mark.parametrize(("key", "garbage"), [g[1:] for g in GARBAGE], ids=[g[0] for g in GARBAGE])
def test_garbage_is_one_line_that_names_the_key(key: str, garbage: str) -> None:
    with pytest.raises(BadRecord) as caught:
        Sample.from_hash({"id": "s", key: garbage}, key="ib:sample:s")
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith("bad Sample record at ib:sample:s: field ")
    assert repr(key) in message
    assert isinstance(caught.value, BusError)


def test_a_missing_required_field_is_named() -> None:
    with pytest.raises(BadRecord, match=r"^bad Sample record: field 'id' is missing$"):
        Sample.from_hash({"count": "1"})


def test_an_empty_required_number_is_refused() -> None:
    class Strict(HashRecord):
        id: str
        at: float

    with pytest.raises(BadRecord, match=r"field 'at' = ''"):
        Strict.from_hash({"id": "x", "at": ""})


def test_a_long_bad_value_is_cut_short() -> None:
    with pytest.raises(BadRecord) as caught:
        Sample.from_hash({"id": "s", "count": "x" * 500})
    assert len(str(caught.value)) < 200


PARTIAL_REFUSALS = [
    ("unknown-field", {"colour": "red"}, r"^Sample has no field 'colour'$"),
    ("text-for-a-number", {"count": "many"}, r"^Sample field 'count' = 'many': "),
    ("list-of-numbers", {"items": [1]}, r"^Sample field 'items' = \[1\]: "),
    ("none-for-a-required", {"count": None}, r"^Sample field 'count' = None: "),
]


@pytest.mark.parametrize(
    ("changes", "message"), [p[1:] for p in PARTIAL_REFUSALS], ids=[p[0] for p in PARTIAL_REFUSALS]
)
def test_partial_updates_check_names_and_values(changes: dict[str, Any], message: str) -> None:
    with pytest.raises(BadRecord, match=message):
        Sample.hash_fields(**changes)
    with pytest.raises(BadRecord):
        Sample(id="s").replace(**changes)


def test_partial_updates_convert_as_whole_records_do() -> None:
    assert Sample.hash_fields(flag=True, maybe_text=None, items=["a"], sender="me") == {
        "flag": "1",
        "maybe_text": "",
        "items": '["a"]',
        "from": "me",
    }


def test_replace_makes_a_checked_copy() -> None:
    record = Sample(id="s")
    changed = record.replace(count="5", items=["a"])
    assert (changed.count, changed.items, record.count) == (5, ("a",), 3)


def test_records_are_frozen_and_hashable() -> None:
    record = Sample(id="s")
    with pytest.raises(ValueError, match="frozen"):
        record.count = 4  # type: ignore[misc]
    assert hash(Agent(id="a", paused=True)) == hash(Agent(id="a", paused=True))


def test_from_dict_reads_as_dict_and_says_where_bad_ones_came_from() -> None:
    record = Sample(id="s", items=("a",), inner=Inner(name="n"))
    assert Sample.from_dict(record.as_dict()) == record
    with pytest.raises(BadRecord, match=r"^bad Sample record from worker w1: field 'flag' = 'perhaps': "):
        Sample.from_dict({"id": "s", "flag": "perhaps"}, source="worker w1")


def test_hash_key_refuses_a_field_the_record_lacks() -> None:
    assert Sample.hash_key("sender") == "from"
    with pytest.raises(BadRecord, match="no field 'state'"):
        Sample.hash_key("state")


# Hashes as the code before this layer (and the hooks, the Lua scripts) wrote them, and what they hold.
OLD_HASHES: list[tuple[str, HashRecord, dict[str, str], dict[str, Any]]] = [
    (
        "agent",
        Agent(id="a"),
        {
            "id": "a1",
            "goal": "Fix it",
            "role": "worker",
            "manager": "m",
            "project": "p",
            "task": "t",
            "root": "/r",
            "worktree": "/r/.ib/agents/a1/repo",
            "branch": "ib/a1",
            "base_branch": "main",
            "session": "ib-r-a1",
            "worker": "w1",
            "model": "",
            "created_at": "1764134400.123456",
            "state": "running",
            "state_at": "1764134401.5",
            "state_by": "hook",
            "claude_session": "uuid",
            "transcript_path": "/t.jsonl",
            "paused": "1",
            # written beside the record: the transcript cursor, the state before `unreachable`
            "transcript_offset": "120",
            "reachable_state": "waiting",
        },
        {
            "created_at": 1764134400.123456,
            "state_at": 1764134401.5,
            "paused": True,
            "role": "worker",
            "model": "",
        },
    ),
    (
        "agent-reserved-only",
        Agent(id="a"),
        {"id": "a2", "worker": "w1"},
        {"state": "creating", "created_at": 0.0, "paused": False, "role": "manager"},
    ),
    (
        "agent-state-from-the-hook",
        Agent(id="a"),
        {"id": "a3", "state": "waiting", "state_at": "1764134400.250", "paused": "0"},
        {"state_at": 1764134400.25, "paused": False},
    ),
    (
        "question-from-ib-ask",
        Question(id="q"),
        {
            "id": "q-1",
            "agent": "a1",
            "text": "Which?",
            "asked_at": "1764134400.5",
            "project": "p",
            "options": '["yes", "no"]',
        },
        {"options": ("yes", "no"), "asked_at": 1764134400.5, "dialog": ""},
    ),
    (
        "question-from-the-hook",
        Question(id="q"),
        {
            "id": "q-2",
            "agent": "a1",
            "text": "Pick",
            "asked_at": "1764134400.500",
            "project": "",
            "options": '["A","B \\u00e9"]',
            "dialog": "p-1",
        },
        {"options": ("A", "B é"), "dialog": "p-1"},
    ),
    (
        "message",
        Message(id="m"),
        {"id": "m-1", "from": "a1", "kind": "alert", "text": "done", "ts": "1764134400.123", "project": ""},
        {"sender": "a1", "ts": 1764134400.123},
    ),
    (
        "merge-request",
        MergeRequest(id="m"),
        {
            "id": "7",
            "project": "p",
            "agent": "a1",
            "branch": "ib/a1",
            "target": "main",
            "worker": "w1",
            "task": "",
            "title": "",
            "status": "conflict",
            "sha": "",
            "commits": "0",
            "files": '["a b.txt", "ü.txt"]',
            "error": "",
            "requested_at": "1.5",
            "finished_at": "0.0",
        },
        {"files": ("a b.txt", "ü.txt"), "commits": 0, "requested_at": 1.5, "finished_at": 0.0},
    ),
    (
        "prompt-from-the-hook",
        Prompt(id="p", agent="a1"),
        {
            "id": "p-1",
            "kind": "permission",
            "tool": "Bash",
            "detail": "rm -rf x",
            "question": "",
            "options": '["Yes","No"]',
            "at": "1764134400.125",
        },
        {"options": ("Yes", "No"), "at": 1764134400.125, "question_id": ""},
    ),
    (
        "prompt-of-the-trust-dialog",
        Prompt(id="p", agent="a1"),
        {"id": "p-2", "kind": "trust", "detail": "/r", "options": "[]", "at": "1764134400.0"},
        {"tool": "", "options": ()},
    ),
    (
        "auto-state",
        AutoState(project="p"),
        {
            "project": "p",
            "worker": "w1",
            "worktrees": "1",
            "max_tasks": "3",
            "agent": "",
            "status": "running",
            "phase": "working",
            "task": "t",
            "task_agent": "a",
            "merge_agent": "",
            "files": "[]",
            "target": "",
            "taken": '["t"]',
            "done": "[]",
            "failed": "[]",
            "reason": "",
            "last_event": "1-0",
            "started_at": "2026-11-26T05:00:00+00:00",
            "outbox": '[{"kind": "give_task"}]',
            "given": "t@1",
        },
        {"worktrees": True, "max_tasks": 3, "taken": ("t",), "started_at": "2026-11-26T05:00:00+00:00"},
    ),
    (
        "task-from-the-lua-script",
        Task(id="t", project="p"),
        {
            "id": "t1",
            "project": "p",
            "title": "Do",
            "body": "",
            "priority": "5",
            "status": "claimed",
            "attempt": "1",
            "max_attempts": "3",
            "created_at": "1764134400000",
            "claimed_by": "a1",
            "claimed_at": "1764134400123",
        },
        {"claimed_at": 1764134400123, "done_at": None, "test_cmd": None, "summary": None, "attempt": 1},
    ),
    (
        "task-released",
        Task(id="t", project="p"),
        {"id": "t2", "project": "p", "title": "Do", "status": "ready", "claimed_by": "", "claimed_at": ""},
        {"claimed_by": None, "claimed_at": None, "priority": 5},
    ),
    (
        "plan-draft",
        PlanDraft(id="plan-1"),
        {
            "id": "plan-1",
            "goal": "g",
            "project": "p",
            "status": "ready",
            "agent": "planner",
            "worker": "w1",
            "created_at": "1764134400",
            "deadline": "1764135000",
            "round": "2",
            "plan": '{"tasks": []}',
            "error": "",
        },
        {"created_at": 1764134400, "round": 2, "plan": '{"tasks": []}'},
    ),
]


@pytest.mark.parametrize(
    ("record", "stored", "expected"), [o[1:] for o in OLD_HASHES], ids=[o[0] for o in OLD_HASHES]
)
def test_hashes_already_on_the_bus_read_as_before(
    record: HashRecord, stored: dict[str, str], expected: dict[str, Any]
) -> None:
    kind = type(record)
    known = {"agent": "a1"} if kind is Prompt else {}  # a prompt's agent is its key's
    read = kind.from_hash(stored, **known)
    for field, value in expected.items():
        assert getattr(read, field) == value, field
    for key, raw in stored.items():  # text fields are the stored strings as they are
        if key in kind.model_fields and isinstance(getattr(read, key), str):
            assert getattr(read, key) == raw, key
    assert kind.from_hash(read.to_hash(), **known) == read


def test_a_schedule_reads_its_template_and_its_score() -> None:
    stored = {
        "id": "sched-1",
        "cron": "0 9 * * 1-5",
        "task": '{"title": "Audit", "project": "p", "body": "", "priority": 3, "after": ["x"], '
        '"max_attempts": 3, "test_cmd": null}',
        "created_at": "1764134400",
        "last_due": "1764140400",
        "last_task": "sched-1-202611260900",
    }
    schedule = Schedule.from_hash(stored, next_due=1764226800)
    assert schedule.task == TaskTemplate(title="Audit", project="p", priority=3, after=("x",))
    assert (schedule.last_due, schedule.next_due) == (1764140400, 1764226800)
    assert "next_due" not in schedule.to_hash()
    assert Schedule.from_hash(schedule.to_hash(), next_due=1764226800) == schedule
    assert Schedule.from_hash({**stored, "last_due": "", "last_task": ""}, next_due=1).last_task is None


def test_a_task_takes_its_dependencies_and_notes_from_other_keys() -> None:
    note = '{"kind": "result", "text": "done", "ts": 1764134400000, "source_task": "spec"}'
    task = Task.from_hash({"id": "t", "project": "p"}, after=["z", "a"], notes=[note])
    assert task.after == ("a", "z")
    assert task.notes == (Note(kind="result", text="done", ts=1764134400000, source_task="spec"),)
    assert task.as_dict()["notes"] == [
        {"kind": "result", "text": "done", "ts": 1764134400000, "source_task": "spec"}
    ]
    with pytest.raises(BadRecord, match="bad Note record"):
        Task.from_hash({"id": "t", "project": "p"}, notes=["{not json"])


def test_a_prompt_does_not_store_its_agent() -> None:
    prompt = Prompt(id="p-1", agent="a1", kind="trust", options=("Yes",))
    assert "agent" not in prompt.to_hash()
    assert Prompt.from_hash(prompt.to_hash(), agent="a1") == prompt
