"""How the plan events read in a project topic, with Approve / Edit / Discard under a ready plan.

Pure. `bot.render.render` shows them like every other event (escaped there, in one place).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from bot.render.callbacks import Action, Callback
from bus.events.event_model import Event

ANCHOR_PREFIX = "plan:"  # a plan message's anchor: replies to it are changes for the planner

Rows = tuple[tuple[tuple[str, str], ...], ...]  # rows of (label, callback data)
PLAN_BUTTONS = (
    (Action.PLAN_APPROVE, "✓ Approve"),
    (Action.PLAN_EDIT, "✎ Edit"),
    (Action.PLAN_DISCARD, "✗ Discard"),
)


def _text(data: dict[str, Any], key: str) -> str:
    value = data.get(key)
    return "" if value is None else str(value)


def plan_ready(event: Event) -> tuple[str, Rows]:
    plan, tree = _text(event.data, "plan"), _text(event.data, "tree")
    head = f"🗺 {plan}: {_text(event.data, 'count')} tasks for: {_text(event.data, 'goal')}"
    tail = "Approve adds them; to change the plan, reply to this message (or tap Edit); Discard drops it."
    row = []
    for action, label in PLAN_BUTTONS:
        data = Callback(action, plan).encode()
        if data is None:
            return f"{head}\n{tree}\n{tail}", ()
        row.append((label, data))
    return f"{head}\n{tree}\n{tail}", (tuple(row),)


def plan_failed(event: Event) -> tuple[str, Rows]:
    plan = _text(event.data, "plan")
    return f"✗ {plan} failed: {_text(event.data, 'error')} — nothing was added", ()


def plan_approved(event: Event) -> tuple[str, Rows]:
    tasks = event.data.get("tasks")
    names = ", ".join(str(t) for t in tasks) if isinstance(tasks, list) else ""
    count = len(tasks) if isinstance(tasks, list) else 0
    return f"✓ {_text(event.data, 'plan')} approved: {count} tasks added" + (
        f": {names}" if names else ""
    ), ()


def plan_discarded(event: Event) -> tuple[str, Rows]:
    return f"🗑 {_text(event.data, 'plan')} discarded: nothing was added", ()


PLAN_VIEWS: dict[str, Callable[[Event], tuple[str, Rows]]] = {
    "plan_ready": plan_ready,
    "plan_failed": plan_failed,
    "plan_approved": plan_approved,
    "plan_discarded": plan_discarded,
}
