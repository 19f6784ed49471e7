"""The status block that `ib status-node` keeps in CLAUDE.md: the JSON it shows (root agents and the messages
queued for the person's primary session), and the splice of the block into
the document that leaves every other byte as it was. Pure: `status_file` does the reading and writing."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NotRequired, TypedDict, cast

from bus.inbox.ages import format_age
from worker.message_kinds import MessageKind

STATUS_FILE = "CLAUDE.md"  # the file the block lives in, from the repository root
MAX_MESSAGES = 50
MAX_CONTENT_CHARS = 1000
PROMPT_CHARS = 60
TRUNCATED = "…"

SECTION_OPEN = "<ittybus>"
SECTION_CLOSE = "</ittybus>"
STATUS_OPEN = "<ittybus-status>"
STATUS_CLOSE = "</ittybus-status>"
NOTICE = "<!-- Auto-updated by ib status-node. Do not edit by hand. -->"

# The seed's schema knows four states; the finer ones of the pane parser fold into them.
_SCHEMA_STATES = {
    "running": "running",
    "creating": "running",
    "compacting": "running",
    "unknown": "running",
    "waiting": "waiting",
    "rate_limited": "waiting",
    "limited": "waiting",  # parked by a usage limit; the worker resumes it at the reset
    "permission": "waiting",  # a dialog waits for the person
    "error": "waiting",  # an API error ended the turn: the person decides whether to resend
    "complete": "complete",
    "stopped": "stopped",
}


@dataclass(frozen=True)
class AgentRecord:
    """What the block needs to know of one agent; `created_at` is epoch seconds, `manager` None for a root."""

    id: str
    state: str
    created_at: float
    prompt: str
    manager: str | None = None


@dataclass(frozen=True)
class UserMessage:
    """A message queued for the person's primary session by `ib send user`; `ts` is epoch seconds."""

    id: str
    ts: float
    kind: MessageKind
    text: str
    sender: str = "unknown"


class RootAgentEntry(TypedDict):
    id: str
    state: str
    age: str
    prompt: str
    children: NotRequired[int]
    children_complete: NotRequired[int]


MessageEntry = TypedDict(
    "MessageEntry", {"id": str, "from": str, "timestamp": str, "type": str, "content": str}
)


class Status(TypedDict):
    last_updated: str
    root_agents: list[RootAgentEntry]
    messages: list[MessageEntry]


def schema_state(state: str) -> str:
    """One of the schema's `running`, `waiting`, `complete`, `stopped` for an agent state; an unknown state
    (from a newer worker) counts as running."""
    return _SCHEMA_STATES.get(state, "running")


def iso_utc(ts: float) -> str:
    """Epoch seconds as `2026-01-11T15:30:00Z`."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ts))


def cap_messages(messages: Sequence[UserMessage], limit: int = MAX_MESSAGES) -> list[UserMessage]:
    """The newest `limit` messages, oldest first (the oldest are dropped first)."""
    ordered = sorted(messages, key=lambda m: m.ts)
    return ordered[-limit:] if limit > 0 else []


def build_status(
    agents: Sequence[AgentRecord],
    messages: Sequence[UserMessage],
    now: float,
    *,
    max_messages: int = MAX_MESSAGES,
    include_children: bool = True,
) -> Status:
    """The block's JSON: root agents (no manager, or a manager that is gone) with their age at `now`,
    first prompt line and counts of their whole subtree; then the newest messages."""
    known = {agent.id for agent in agents}
    roots = sorted(
        (a for a in agents if not a.manager or a.manager not in known), key=lambda a: (a.created_at, a.id)
    )
    return {
        "last_updated": iso_utc(now),
        "root_agents": [_root_entry(root, agents, now, include_children) for root in roots],
        "messages": [_message_entry(message) for message in cap_messages(messages, max_messages)],
    }


def settle(status: Status, previous_block: str | None) -> Status:
    """`status`, or when nothing but the clock moved since `previous_block` (last_updated and the ages), the
    previous block itself, so that it renders to the same bytes and nothing is written."""
    try:
        previous = json.loads(previous_block or "")
    except ValueError:
        return status
    if isinstance(previous, dict) and _without_clock(previous) == _without_clock(status):
        return cast(Status, previous)  # equal to `status` apart from the clock fields
    return status


def render_block(status: Status) -> str:
    """The block's text: the JSON indented by two, non-ASCII kept as it is."""
    return json.dumps(status, indent=2, ensure_ascii=False)


def read_block(document: bytes) -> str | None:
    """The JSON text of the status block in `document`, or None when there is no block."""
    span = _status_span(document)
    if span is None or not span[2]:
        return None
    raw = document[span[0] + len(STATUS_OPEN) : span[1] - len(STATUS_CLOSE)]
    inner = raw.decode("utf-8", errors="replace").strip()
    if inner.startswith("<!--") and "-->" in inner:
        inner = inner.split("-->", 1)[1].strip()
    return inner


def splice(document: bytes, block: str) -> bytes:
    """`document` with `block` as its status block: replaced where the markers are, else added before the
    end of the ittybus section, else appended in a new section. Every other byte stays as it was; the block
    takes the document's line endings. Returns `document` itself when it already holds exactly this block."""
    eol = _line_ending(document)
    # split on newlines only: JSON keeps U+2028 and friends raw inside strings, and they must stay there
    lines = block.replace("\r\n", "\n").rstrip("\n").split("\n")
    node = eol.join(
        [STATUS_OPEN.encode(), NOTICE.encode(), *(line.encode() for line in lines), STATUS_CLOSE.encode()]
    )
    span = _status_span(document)
    if span is not None:
        start, end, _ = span
        return document if document[start:end] == node else document[:start] + node + document[end:]
    section_open = _marker(SECTION_OPEN).search(document)
    if section_open is not None:
        section_close = _marker(SECTION_CLOSE).search(document, section_open.end())
        if section_close is not None:
            at = document.rfind(b"\n", 0, section_close.start()) + 1
            return document[:at] + node + eol + eol + document[at:]
        return document[: section_open.end(1)] + eol + node + document[section_open.end(1) :]
    return (
        document
        + _append_gap(document, eol)
        + eol.join([SECTION_OPEN.encode(), node, SECTION_CLOSE.encode()])
        + (eol if not document or document.endswith(b"\n") else b"")
    )


def _root_entry(
    root: AgentRecord, agents: Sequence[AgentRecord], now: float, with_children: bool
) -> RootAgentEntry:
    lines = root.prompt.strip().splitlines()
    entry: RootAgentEntry = {
        "id": root.id,
        "state": schema_state(root.state),
        "age": format_age(now - root.created_at),
        "prompt": lines[0][:PROMPT_CHARS] if lines else "",
    }
    if with_children:
        subtree = _descendants(root.id, agents)
        entry["children"] = len(subtree)
        entry["children_complete"] = sum(1 for agent in subtree if agent.state == "complete")
    return entry


def _descendants(root_id: str, agents: Sequence[AgentRecord]) -> list[AgentRecord]:
    found: list[AgentRecord] = []
    seen = {root_id}
    frontier = [root_id]
    while frontier:
        manager = frontier.pop()
        for agent in agents:
            if agent.manager == manager and agent.id not in seen:
                seen.add(agent.id)
                found.append(agent)
                frontier.append(agent.id)
    return found


def _message_entry(message: UserMessage) -> MessageEntry:
    text = message.text
    if len(text) > MAX_CONTENT_CHARS:
        text = text[: MAX_CONTENT_CHARS - len(TRUNCATED)] + TRUNCATED
    return {
        "id": message.id,
        "from": message.sender,
        "timestamp": iso_utc(message.ts),
        "type": message.kind,
        "content": text,
    }


def _without_clock(status: object) -> object:
    if not isinstance(status, dict):
        return status
    agents = status.get("root_agents")
    if isinstance(agents, list):
        agents = [{k: v for k, v in a.items() if k != "age"} if isinstance(a, dict) else a for a in agents]
    return {**{k: v for k, v in status.items() if k != "last_updated"}, "root_agents": agents}


def _marker(tag: str) -> re.Pattern[bytes]:
    """A marker counts only on a line of its own, so prose that mentions the tag is never taken for it."""
    return re.compile(rb"^[ \t]*(" + re.escape(tag.encode()) + rb")[ \t]*\r?$", re.MULTILINE)


def _status_span(document: bytes) -> tuple[int, int, bool] | None:
    """From the start of the opening status marker to the end of the closing one, and whether there is a
    closing one: a lone opening marker is replaced by a whole block, and nothing after it is taken away."""
    opening = _marker(STATUS_OPEN).search(document)
    if opening is None:
        return None
    closing = _marker(STATUS_CLOSE).search(document, opening.end())
    if closing is None:
        return opening.start(1), opening.end(1), False
    return opening.start(1), closing.end(1), True


def _line_ending(document: bytes) -> bytes:
    crlf = document.count(b"\r\n")
    return b"\r\n" if crlf > document.count(b"\n") - crlf else b"\n"


def _append_gap(document: bytes, eol: bytes) -> bytes:
    """What goes between the document and an appended section: end its last line, then one blank line."""
    if not document:
        return b""
    gap = b"" if document.endswith(b"\n") else eol
    ended = document + gap
    return gap if ended.endswith((b"\n\n", b"\n\r\n")) else gap + eol
