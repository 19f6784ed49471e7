"""The event envelope as plain data: the type names, building an event, and its JSON wire form.

Pure and cheap to import (the C JSON accelerator and time only): hooks and `ib notify` build
events here without loading pydantic. `bus.events.event_model` gives consumers the typed model of the same
envelope.
"""

from __future__ import annotations

import os
import time

from bus.wire import fastjson

TYPE_CHECKING = False  # typing costs milliseconds on the hooks' path; the checker still sees the types
if TYPE_CHECKING:
    from typing import Any

AGENT_TYPES = (
    "complete",
    "waiting",
    "question",
    "state",
    "spawned",
    "stopped",
    "killed",
    "merged",
    "rate_limited",
    "limited",  # parked by its plan's usage limit until the reset (data: reset_at, until, window, account)
    "resumed",  # went on by itself at the reset of its usage limit
    "message",
    "permission",
    "dialog_detail",  # what a hook adds (tool, command, plan) to a dialog the pane watcher told first
    "error",
    "notification",
)
TASK_TYPES = ("task_added", "task_ready", "task_claimed", "task_done", "task_failed")
MERGE_TYPES = ("merge_ready", "merge_merged", "merge_conflict", "merge_failed")
AUTO_TYPES = ("auto_started", "auto_finished", "auto_paused", "auto_stopped")
CONFLICT_TYPES = ("conflict_risk",)  # worker.conflicts: two sides of work that will not merge
BUDGET_TYPES = ("budget_warning", "budget_exceeded", "runaway")  # worker.budgets: an agent near or paused
ALL_TYPES = AGENT_TYPES + TASK_TYPES + MERGE_TYPES + AUTO_TYPES + CONFLICT_TYPES + BUDGET_TYPES

# What `ib notify` may send (the seed's three).
NOTIFY_TYPES = ("complete", "waiting", "question")

# What `ib listen` wakes for by default: every end of a turn and everything that waits on the person — a
# dialog of any kind (tool, plan, folder trust, one the screen alone shows), a usage limit, a conflict
# ahead, a budget or watchdog pause. `ib listen --help`, the README's quick start and docs/guide/bus.md
# name this list; tests/unit/test_listen_types.py holds them to it.
LISTEN_TYPES = (
    "complete",
    "waiting",
    "question",
    "permission",
    "error",
    "limited",
    "conflict_risk",
    "budget_exceeded",
    "runaway",
)

# The one field of a stream entry that carries the JSON envelope.
EVENT_FIELD = "e"

# The envelope's client-made id: stamped once by the publisher, so Redis appends the event once however
# often it is sent (bus/lua/publish_once.lua). The stream id (`id`) is Redis's, given on append.
EID_FIELD = "eid"

if TYPE_CHECKING:
    Envelope = dict[str, Any]
else:
    Envelope = dict


def now_ts() -> str:
    """The current time as the envelope's ISO 8601 timestamp (UTC, seconds)."""
    return time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime())


def make_event(
    type_: str,
    msg: str = "",
    *,
    sender: str = "system",
    project: str | None = None,
    agent: str | None = None,
    task: str | None = None,
    data: dict[str, Any] | None = None,
    ts: str | None = None,
) -> Envelope:
    """An envelope without its id: Redis assigns the id when the event is appended."""
    return {
        "ts": ts or now_ts(),
        "type": type_,
        "from": sender,
        "project": project,
        "agent": agent,
        "task": task,
        "msg": msg,
        "data": data or {},
    }


def stamped(event: Envelope) -> Envelope:
    """`event` with its client-made id, a new one unless it has one."""
    if isinstance(event.get(EID_FIELD), str) and event[EID_FIELD]:
        return event
    return {**event, EID_FIELD: os.urandom(12).hex()}


def encode(event: Envelope) -> str:
    """JSON for the wire: compact, unicode kept as is, every control character escaped."""
    body = {k: v for k, v in event.items() if k != "id"}
    return fastjson.dumps(body)


def decode(entry_id: str, raw: str | bytes | None) -> Envelope:
    """An envelope from a stream entry. Never raises: garbage becomes an `invalid` event for the record."""
    try:
        text = raw.decode("utf-8") if isinstance(raw, bytes) else raw
        body = fastjson.loads(text) if text is not None else None
    except (ValueError, UnicodeDecodeError):
        body = None
    if not isinstance(body, dict):
        body = {"type": "invalid", "msg": "undecodable stream entry", "data": {"raw": _printable(raw)}}
    body["id"] = entry_id
    body.setdefault("ts", "")
    body.setdefault("type", "unknown")
    body.setdefault("from", "unknown")
    body.setdefault("msg", "")
    return body


def check(raw: str | bytes | None) -> Envelope | str:
    """The envelope in a stream entry's field, or why it cannot be one. Pure.

    Bytes that are not UTF-8 (lone surrogates, as `surrogateescape` reads them, or raw bytes), text that
    is not JSON, JSON that is not an object, and an object without a string `type` are refused; anything
    else is an event, unknown fields and types from newer producers included."""
    if raw is None:
        return f"no {EVENT_FIELD!r} field"
    try:
        text = raw.decode("utf-8") if isinstance(raw, bytes) else raw
        text.encode("utf-8")
    except UnicodeError:
        return "not valid UTF-8"
    try:
        body = fastjson.loads(text)
    except (ValueError, SystemError, RecursionError):  # SystemError: see worker.hooks.pre_tool_use
        return "not JSON"
    if not isinstance(body, dict):
        return f"not a JSON object (a {type(body).__name__})"
    kind = body.get("type")
    if not isinstance(kind, str) or not kind:
        return "no event type (field 'type' must be a non-empty string)"
    return body


def to_jsonl(event: Envelope) -> str:
    """One JSONL line for `ib listen` / `ib events`: the id first, then the seed's fields, then the rest."""
    first = ("id", "ts", "from", "type", "msg")
    ordered = {k: event.get(k) for k in first}
    ordered.update({k: v for k, v in event.items() if k not in first})
    line = fastjson.dumps(ordered)
    # characters that line splitters (Python's splitlines, some editors) take as line breaks
    return line.replace("\x85", "\\u0085").replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def _printable(raw: str | bytes | None) -> str:
    if isinstance(raw, bytes):
        return raw.decode("utf-8", "replace")[:200]
    return (raw or "")[:200]
