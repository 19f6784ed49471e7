"""How the budget and watchdog events read in an agent's topic: `budget_warning`, `budget_exceeded` with
Raise / Stop under it, and `runaway` with the reason, the last tool calls, and Continue / Stop.

Pure. `bot.render.render` shows them like every other event (escaped there, in one place).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from bot.render.callbacks import Action, Callback
from bot.render.plan_render import Rows
from bus.events.event_model import Event

SHOWN_CALLS = 5


def _text(data: dict[str, Any], key: str, default: str = "") -> str:
    value = data.get(key)
    return default if value is None else str(value)


def _buttons(agent: str, first: tuple[Action, str]) -> Rows:
    """One row: the event's own button, then Stop (the agent is killed); none when an id cannot fit."""
    row = []
    for action, label in (first, (Action.KILL, "✗ Stop")):
        data = Callback(action, agent).encode() if agent else None
        if data is None:
            return ()
        row.append((label, data))
    return (tuple(row),)


def _budget_line(event: Event) -> str:
    data = event.data
    scope, target = _text(data, "scope", "?"), _text(data, "target", "?")
    spent, limit = _text(data, "spent_shown", "?"), _text(data, "limit_shown", "?")
    share = data.get("share")
    percent = f" ({share:.0%})" if isinstance(share, int | float) else ""
    return f"{scope} {target} budget: {spent} of {limit}{percent}"


def budget_warning(event: Event) -> tuple[str, Rows]:
    return f"⚠ {event.agent or '?'} is near its budget\n{_budget_line(event)}", ()


def budget_exceeded(event: Event) -> tuple[str, Rows]:
    agent = event.agent or ""
    step = _text(event.data, "raise_by", "?")
    text = (
        f"⏸ {agent or '?'} is paused: budget used up\n{_budget_line(event)}\n"
        f"Its next tool call waits for you: raise by {step}, or stop it."
    )
    return text, _buttons(agent, (Action.RAISE, f"Raise by {step}"))


def runaway(event: Event) -> tuple[str, Rows]:
    agent = event.agent or ""
    reason = _text(event.data, "reason", "no reason given")
    calls = event.data.get("calls")
    shown = [c for c in calls if isinstance(c, dict)][-SHOWN_CALLS:] if isinstance(calls, list) else []
    lines = [f"⏸ {agent or '?'} is paused by the runaway watchdog", f"Why: {reason}"]
    if shown:
        lines.append("Last tool calls:")
        lines.extend(f"  • {_text(c, 'summary') or _text(c, 'tool', '?')}" for c in shown)
    return "\n".join(lines), _buttons(agent, (Action.CONTINUE, "▶ Continue"))


BUDGET_VIEWS: dict[str, Callable[[Event], tuple[str, Rows]]] = {
    "budget_warning": budget_warning,
    "budget_exceeded": budget_exceeded,
    "runaway": runaway,
}
