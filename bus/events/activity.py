"""What an agent is doing right now, folded from its output items (`out:<agent>`: prompt, tool_use,
tool_result, text) and ended by its turn-ending events; and the one status line that says it.

Pure. The bot's live status line and `ib watch` both read it. Times are Unix seconds; items carry the
transcript's timestamp, so "for how long" is measured from when Claude Code wrote the item, not from
when the worker's transcript tail (about a second later) published it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from datetime import datetime

from bus.costs.usage import dollars

# Events after which the agent's turn is over (its status line is removed), and the pane states that
# say the same when the pane watcher, not a hook, saw it. `error` is only ever a turn's end (a retry
# Claude Code still makes raises none).
TURN_ENDS = frozenset({"complete", "waiting", "question", "error", "limited", "stopped", "killed"})
IDLE_STATES = frozenset({"complete", "waiting", "error", "rate_limited", "limited", "stopped"})
# An output item the worker writes, not the transcript: its tail went through the turn that the event
# in its `event` field ended (read at once on the end). It shows nothing and folds into nothing.
TURN_END = "turn_end"
THINKING = "thinking"

_TOOL_USE = re.compile(r"^\*\*(?P<name>[^*\n]{1,64})\*\*\((?P<arg>.*)\)$", re.DOTALL)


@dataclass(frozen=True)
class Activity:
    """One agent's turn: when it began, what it does now and since when, how many tools it used."""

    working: bool = False
    turn_started: float | None = None
    doing: str = THINKING
    since: float | None = None
    tools: int = 0
    tokens: int | None = None  # the context's size, from the latest answer that said it
    usd: float | None = None  # what the agent has cost so far, from the latest answer that said it


def item_tokens(value: str) -> int | None:
    """An item's `tokens` field; None when it has none."""
    return int(value) if value.isdigit() else None


def item_usd(value: str) -> float | None:
    """An item's `usd` field (the agent's cost so far); None when it has none or it is no amount."""
    whole, _, cents = value.partition(".")
    return float(value) if (whole + cents).isdigit() and whole.isascii() and cents.isascii() else None


def fold_item(activity: Activity, fields: Mapping[str, str], now: float) -> Activity:
    """`fold` for one `out:<agent>` entry (its fields as read from the stream)."""
    at = item_time(fields.get("ts", ""), now)
    kind, text, tool = fields.get("kind", ""), fields.get("text", ""), fields.get("tool", "")
    activity = fold(activity, kind, text, tool, at, item_tokens(fields.get("tokens", "")))
    usd = item_usd(fields.get("usd", ""))
    return activity if usd is None else replace(activity, usd=usd)


def item_time(ts: str, default: float) -> float:
    """An item's ISO timestamp as Unix seconds; `default` when it has none or it cannot be read."""
    if not ts:
        return default
    try:
        return datetime.fromisoformat(ts).timestamp()
    except ValueError:
        return default


def tool_doing(text: str, tool: str = "") -> str:
    """`**Read**(src/app.py)` as `Read src/app.py`."""
    m = _TOOL_USE.match(text.strip())
    if m is None:
        return tool or text.strip()[:80]
    arg = m.group("arg").strip()
    return f"{m.group('name')} {arg}" if arg else m.group("name")


def fold(
    activity: Activity, kind: str, text: str, tool: str, at: float, tokens: int | None = None
) -> Activity:
    """The activity after one output item written at `at`. A prompt starts a turn; items after the
    turn ended (the transcript tail lags the Stop hook) change nothing."""
    if kind == "prompt":
        return Activity(
            working=True, turn_started=at, doing=THINKING, since=at, tokens=activity.tokens, usd=activity.usd
        )
    if tokens is not None:
        activity = replace(activity, tokens=tokens)
    if not activity.working:
        return activity
    if kind == "tool_use":
        return replace(activity, doing=tool_doing(text, tool), since=at, tools=activity.tools + 1)
    if kind in ("tool_result", "text"):
        return replace(activity, doing=THINKING, since=at)
    return activity


def current(items: Iterable[Mapping[str, str]], state: str, now: float) -> Activity:
    """An agent's activity from its latest output items (oldest first) and its state: a working state
    with no prompt among the items is a turn whose start fell outside them (its length unknown)."""
    activity = Activity(working=state not in IDLE_STATES)
    for fields in items:
        activity = fold_item(activity, fields, now)
    return activity if state not in IDLE_STATES else end_turn(activity)


def ends_turn(event_type: str, data: Mapping[str, object]) -> bool:
    """Whether an event of the agent says its turn is over."""
    return event_type in TURN_ENDS or (event_type == "state" and data.get("to_state") in IDLE_STATES)


def end_turn(activity: Activity) -> Activity:
    return replace(activity, working=False)


def duration(seconds: float) -> str:
    """`7s`, `3m05s`, `1h02m`."""
    s = max(0, int(seconds))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{s % 3600 // 60:02d}m"


def activity_line(activity: Activity, now: float) -> str:
    """`⚙ Read src/app.py · 12s — turn 3m05s, 7 tools · 45k tokens · $0.42`; "" when the agent is not
    working."""
    if not activity.working:
        return ""
    since = activity.since if activity.since is not None else now
    line = f"⚙ {activity.doing} · {duration(now - since)}"
    if activity.turn_started is not None:  # else the turn began before the items at hand
        tools = f", {activity.tools} tool" + ("" if activity.tools == 1 else "s")
        line += f" — turn {duration(now - activity.turn_started)}{tools}"
    if activity.tokens is not None:
        line += f" · {kilo(activity.tokens)} tokens"
    if activity.usd is not None:
        line += f" · {dollars(activity.usd)}"
    return line


def kilo(n: int) -> str:
    """`812`, `45k`, `1.2M`."""
    if n < 1000:
        return str(n)
    if n < 1_000_000:
        return f"{n / 1000:.0f}k"
    return f"{n / 1_000_000:.1f}M"
