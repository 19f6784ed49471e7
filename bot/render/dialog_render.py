"""How an agent's dialog reads in its topic, with the buttons that answer it.

Pure. A dialog whose event has a question to answer (`data.question_id`: any dialog the pane watcher
read, an AskUserQuestion) gets one button per option (`data.options`, bus.events.event_options), the default
(`default`: the index of the option selected) marked; a tap answers the question with the option's
number (its place when the dialog draws none). A known dialog told only by a hook (permission, plan,
folder trust) keeps Allow / Always allow / Deny (Approve / Keep planning, Trust / Refuse), which answer
its prompt. `bot.render.render` escapes the text.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from bot.render.callbacks import MAX_OPTION_INDEX, Action, Callback
from bus.events.event_model import Event
from bus.events.event_options import options_of

Rows = tuple[tuple[tuple[str, str], ...], ...]  # rows of (label, callback data)
BUTTON_LABEL_WIDTH = 40
DEFAULT_MARK = " (default)"
MAX_OPTIONS = 20

_KNOWN_LABELS = {
    "permission": ((Action.ALLOW, "Allow"), (Action.ALWAYS, "Always allow"), (Action.DENY, "Deny")),
    "plan": ((Action.ALLOW, "Approve"), (Action.DENY, "Keep planning")),
    "trust": ((Action.ALLOW, "Trust"), (Action.DENY, "Refuse")),
}


class DrawnOption(NamedTuple):
    """An option as the dialog draws it: the number a person types (None: unnumbered) and its label."""

    number: int | None
    label: str


def _text(data: dict[str, Any], key: str, default: str = "") -> str:
    value = data.get(key)
    return default if value is None else str(value)


def drawn_options(data: dict[str, Any]) -> tuple[DrawnOption, ...]:
    """The options of `data` (bus.events.event_options: the same shape from every producer); () when there are
    none, or any is malformed (then the dialog is answered by its kind's buttons, or from the CLI)."""
    return tuple(DrawnOption(number, label) for number, label in options_of(data.get("options")) or ())


def shorten_label(label: str, width: int) -> str:
    flat = " ".join(label.split())
    return flat if len(flat) <= width else flat[: width - 1].rstrip() + "…"


def option_rows(event: Event) -> Rows:
    """One button per option drawn, in order, the default marked; () when the options cannot be
    answered by button (no question to answer, an id or a number that does not fit a button)."""
    options = drawn_options(event.data)
    question = _text(event.data, "question_id")
    if not options or not question or len(options) > MAX_OPTIONS:
        return ()
    default = event.data.get("default")
    rows = []
    for index, option in enumerate(options):
        typed = option.number if option.number is not None else index + 1
        if not 0 <= typed <= MAX_OPTION_INDEX:
            return ()
        data = Callback(Action.OPTION, question, typed).encode()
        if data is None:
            return ()
        mark = DEFAULT_MARK if default == index and type(default) is int else ""
        label = shorten_label(option.label, BUTTON_LABEL_WIDTH - len(mark)) or str(typed)
        rows.append(((label + mark, data),))
    return tuple(rows)


def _known_buttons(event: Event, agent: str) -> Rows:
    """Allow / Deny (plan: Approve / Keep planning; folder trust: Trust / Refuse), by the dialog's prompt."""
    prompt = _text(event.data, "prompt_id")
    row = []
    for action, label in _KNOWN_LABELS.get(_text(event.data, "kind", "permission"), ()):
        data = Callback(action, agent, prompt=prompt).encode()
        if data is None:
            return ()
        row.append((label, data))
    return (tuple(row),) if row else ()


def dialog_view(event: Event, agent: str) -> tuple[str, Rows]:
    """A `permission` event: what the dialog asks, and its buttons."""
    kind = _text(event.data, "kind", "permission")
    title = _text(event.data, "title").strip() or _text(event.data, "question").strip()
    tool, detail = _text(event.data, "tool"), _text(event.data, "detail").strip()
    if kind == "trust":
        head = f"🔐 {agent} asks whether Claude Code may trust the folder {_text(event.data, 'folder', '?')}"
    elif kind == "plan":
        plan = _text(event.data, "plan").strip()
        head = f"📋 {agent} has a plan and asks to go ahead" + (f"\n{plan}" if plan else "")
    elif tool or not title:
        head = f"🔐 {agent} asks to use {tool or 'a tool'}" + (f"\n{detail}" if detail else "")
    else:
        head = f"🔐 {agent} asks: {title}"
    return head, option_rows(event) or _known_buttons(event, agent)
