"""What a pushed message says (pure): one short line per event — which agent, what happened, the command
that acts on it — and a burst of lines folded into one message within the inbox's limits."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

EXCERPT = 200  # characters of an event's own text in its line; the rest is in `ib look` / `ib events`
MESSAGE_LIMIT = 16_000  # characters of one message (Claude Code resets the connection past 1,048,576)
HEAD = "[ittybus]"
ACK_HINT = (
    "(Acting on an agent — ib approve, answer, look, diff, merge — acknowledges its events; "
    "`ib ack ID` or `ib ack --all` the rest.)"
)


def actions(kind: str, agent: str) -> str:
    """The commands that act on an event of type `kind` from `agent`."""
    if not agent:
        return "ib events --since 0"
    if kind == "permission":
        return f'ib approve {agent}  (or ib deny {agent} "why"; ib look {agent} shows the dialog)'
    if kind == "question":
        return f"ib answer {agent} OPTION  (ib look {agent} shows the options)"
    if kind == "waiting":
        return f'ib send {agent} "…"  (ib look {agent} shows where it stopped)'
    if kind == "complete":
        return f"ib diff {agent}, then ib merge {agent}"
    return f"ib look {agent}"


def event_line(event: Mapping[str, object]) -> str:
    """One line about one event, its own text cut to EXCERPT characters."""
    agent = str(event.get("agent") or "")
    kind = str(event.get("type") or "event")
    text = " ".join(str(event.get("msg") or "").split())
    if len(text) > EXCERPT:
        text = text[: EXCERPT - 1] + "… (cut)"
    who = agent or str(event.get("from") or "ittybus")
    said = f"{who} {kind}" + (f": {text}" if text else "")
    return f"{said} → {actions(kind, agent)}"


def fold(items: Sequence[tuple[str, str]], limit: int = MESSAGE_LIMIT) -> tuple[str, list[str]]:
    """One message for (event id, line) pairs, oldest first: as many as fit in `limit` characters; the
    ids it carries (the rest wait for the next message). Empty when there is nothing."""
    if not items:
        return "", []
    if len(items) == 1:
        event_id, line = items[0]
        return f"{HEAD} [{event_id}] {line}\n{ACK_HINT}", [event_id]
    lines: list[str] = []
    ids: list[str] = []
    size = 300  # room for the head and the closing lines
    for event_id, line in items:
        entry = f"- [{event_id}] {line}"
        if lines and size + len(entry) + 1 > limit:
            break
        lines.append(entry)
        ids.append(event_id)
        size += len(entry) + 1
    head = f"{HEAD} {len(ids)} events for you (oldest first):"
    if len(ids) < len(items):
        head = f"{HEAD} {len(ids)} of {len(items)} events for you (oldest first; the rest come next):"
    return "\n".join([head, *lines, ACK_HINT]), ids
