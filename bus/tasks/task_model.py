"""One task of the graph as plain data: `Task`, its context `Note`s, and the checks on what people type.

Pure (json and pydantic only): `bus.tasks.task_store.TaskStore` reads hashes from Redis and builds these with
`Task.from_hash` (`bus.stores.hash_record` converts the strings).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any, Self

from bus.errors import BadRecord, InvalidInput
from bus.stores.hash_record import HashRecord
from bus.tasks.task_defaults import DEFAULT_MAX_ATTEMPTS, DEFAULT_PRIORITY

STATUSES = ("draft", "pending", "ready", "claimed", "done", "failed")
NOTE_KINDS = ("observation", "result", "handoff", "test_failure")

MIN_PRIORITY, MAX_PRIORITY = 0, 10
MAX_MAX_ATTEMPTS = 100
MAX_TITLE_CHARS = 200
MAX_TEST_CMD_CHARS = 4096


class Note(HashRecord):
    """A piece of context: what an agent saw, did or hands on. `source_task` is the task it was written on.
    Kept as JSON in the task's list of notes (the Lua scripts write it), not as a hash of its own."""

    kind: str
    text: str
    ts: int
    source_task: str

    @classmethod
    def from_json(cls, raw: str) -> Note:
        try:
            body = json.loads(raw)
        except ValueError:
            raise BadRecord(f"bad Note record: not JSON: {raw[:40]!r}") from None
        if not isinstance(body, dict):
            raise BadRecord(f"bad Note record: not a JSON object: {raw[:40]!r}")
        return cls.from_dict(body)


class Task(HashRecord):
    """A unit of work. Times are Unix milliseconds from the Redis clock; `after` lists the dependencies."""

    id: str
    project: str
    title: str = ""
    body: str = ""
    priority: int = DEFAULT_PRIORITY
    status: str = "pending"
    attempt: int = 0
    max_attempts: int = DEFAULT_MAX_ATTEMPTS
    created_at: int = 0
    claimed_by: str | None = None
    claimed_at: int | None = None
    done_at: int | None = None
    test_cmd: str | None = None
    summary: str | None = None
    schedule: str | None = None  # the schedule that added it
    touches: tuple[str, ...] = ()  # the files it expects to change (bus.tasks.touches)
    cli: str = ""  # the agent program an agent for it runs (`--cli`); "": the worker's IB_DEFAULT_CLI
    after: tuple[str, ...] = ()
    notes: tuple[Note, ...] = ()

    @classmethod
    def from_hash(
        cls,
        data: Mapping[str, str],
        *,
        key: str = "",
        after: Iterable[str] = (),
        notes: Iterable[str] = (),
        **known: Any,
    ) -> Self:
        """A task from its Redis hash, its dependency ids and its notes (JSON strings, oldest first)."""
        return super().from_hash(
            data,
            key=key,
            after=tuple(sorted(after)),
            notes=tuple(Note.from_json(raw) for raw in notes),
            **known,
        )


def check_priority(value: object) -> int:
    """An int from 0 to 10, else InvalidInput that says so."""
    if isinstance(value, bool) or not isinstance(value, int) or not MIN_PRIORITY <= value <= MAX_PRIORITY:
        allowed = f"a whole number from {MIN_PRIORITY} to {MAX_PRIORITY}"
        raise InvalidInput(f"bad priority {value!r}: use {allowed}")
    return value


def check_max_attempts(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_MAX_ATTEMPTS:
        raise InvalidInput(f"bad max_attempts {value!r}: use a whole number from 1 to {MAX_MAX_ATTEMPTS}")
    return value


def check_title(value: str) -> str:
    """The title without surrounding blanks: one line, 1-200 characters."""
    title = value.strip() if isinstance(value, str) else ""
    if not title:
        raise InvalidInput("a task needs a title: give one line of text")
    if "\n" in title or "\r" in title:
        raise InvalidInput(f"bad title {title[:40]!r}...: a title is one line; put the details in the body")
    if len(title) > MAX_TITLE_CHARS:
        raise InvalidInput(
            f"title is {len(title)} characters; the limit is {MAX_TITLE_CHARS}: put the details in the body"
        )
    return title


def check_text(what: str, value: str, max_bytes: int, *, allow_empty: bool = True) -> str:
    """Free text (a body, a note, a summary) within `max_bytes` of UTF-8."""
    if not isinstance(value, str):
        raise InvalidInput(f"bad {what}: expected text, got {type(value).__name__}")
    if not allow_empty and not value.strip():
        raise InvalidInput(f"the {what} is empty: write something")
    size = len(value.encode("utf-8"))
    if size > max_bytes:
        raise InvalidInput(
            f"the {what} is {size} bytes; the limit is {max_bytes} bytes ({max_bytes // 1024} KiB): "
            "shorten it or point to a file"
        )
    return value


def check_test_cmd(value: str | None) -> str | None:
    if value is None or not value.strip():
        return None
    if len(value) > MAX_TEST_CMD_CHARS or "\n" in value:
        raise InvalidInput(f"bad test command: one line of at most {MAX_TEST_CMD_CHARS} characters")
    return value.strip()


def check_note_kind(kind: str) -> str:
    if kind not in NOTE_KINDS:
        raise InvalidInput(f"bad note kind {kind!r}: use one of {', '.join(NOTE_KINDS)}")
    return kind


def check_status(status: str) -> str:
    if status not in STATUSES:
        raise InvalidInput(f"bad status {status!r}: use one of {', '.join(STATUSES)}")
    return status


def check_after(task_id: str | None, after: Iterable[str]) -> list[str]:
    """Dependency ids without repeats, in the order given; a task cannot depend on itself."""
    deps = list(dict.fromkeys(after))
    if task_id is not None and task_id in deps:
        raise InvalidInput(f"task {task_id!r} cannot depend on itself: remove it from --after")
    return deps
