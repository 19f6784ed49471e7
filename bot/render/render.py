"""What an event looks like in Telegram: its text (HTML parse mode) and its inline buttons.

Pure. Every piece of dynamic text goes through `escape`; buttons carry callback data built by
`bot.render.callbacks`, so it is always valid and at most 64 bytes.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, NamedTuple

from bot.render.budget_render import BUDGET_VIEWS
from bot.render.callbacks import Action, Callback, parse_callback
from bot.render.dialog_render import BUTTON_LABEL_WIDTH, MAX_OPTIONS, dialog_view, drawn_options, option_rows
from bot.render.plan_render import PLAN_VIEWS
from bus.events.event_model import Event

__all__ = [
    "PARSE_MODE",
    "Button",
    "Callback",
    "Rendered",
    "Style",
    "escape",
    "parse_callback",
    "render",
    "render_output",
    "shorten",
]

PARSE_MODE = "HTML"
SUMMARY_WIDTH = 200

_LANGUAGE = re.compile(r"[A-Za-z0-9_+-]{1,32}")


class Style(StrEnum):
    """How much of an event a topic shows."""

    FULL = "full"  # every line, with buttons
    SUMMARY = "summary"  # one line, no buttons (the project topic's view of agent events)
    OUTPUT = "agent-output"  # a `message` event: the agent's words as it wrote them (fences as <pre>)


class Button(NamedTuple):
    label: str
    data: str


@dataclass(frozen=True)
class Rendered:
    """Telegram HTML text, and inline keyboard rows of (label, callback data)."""

    text: str
    buttons: tuple[tuple[Button, ...], ...] = ()


def escape(text: str) -> str:
    """Text made safe for HTML parse mode: &, < and > as entities (quotes only matter in attributes)."""
    return html.escape(text, quote=False)


def shorten(text: str, width: int = SUMMARY_WIDTH) -> str:
    """The first line of `text`, cut to `width` characters with an ellipsis."""
    first = text.strip().split("\n", 1)[0].strip()
    more = "\n" in text.strip()
    if len(first) > width:
        return first[: width - 1].rstrip() + "…"
    return first + (" …" if more else "")


class _View(NamedTuple):
    """An event as plain text (escaped later, in one place) and its buttons."""

    text: str
    buttons: tuple[tuple[Button, ...], ...] = ()


_OWN_VIEWS = {**PLAN_VIEWS, **BUDGET_VIEWS}  # areas that render their events in a module of their own


def _own_view(event: Event) -> _View:
    text, rows = _OWN_VIEWS[event.type](event)
    return _View(text, tuple(tuple(Button(label, data) for label, data in row) for row in rows))


def render(event: Event, style: Style) -> Rendered:
    """The message that shows `event` in the given style. The text is never empty.

    OUTPUT applies to `message` events with text; any other event in that style shows in full.
    """
    if style is Style.OUTPUT and event.type == "message" and event.msg.strip():
        return Rendered(render_output(event.msg))
    view = _own_view(event) if event.type in _OWN_VIEWS else _RENDERERS.get(event.type, _other)(event)
    if style is Style.SUMMARY:
        return Rendered(escape(shorten(view.text)))
    return Rendered(render_output(view.text.strip()), view.buttons)  # an agent's words keep their code


def render_output(text: str) -> str:
    """Agent text as HTML: escaped, with ``` fenced blocks turned into <pre><code> (language kept)."""
    out: list[str] = []
    code: list[str] | None = None
    opener = ""
    for line in text.strip("\n").split("\n"):
        stripped = line.strip()
        if stripped.startswith("```"):
            if code is None:
                language = stripped[3:].strip()
                opener = (
                    f'<pre><code class="language-{language}">'
                    if _LANGUAGE.fullmatch(language)
                    else "<pre><code>"
                )
                code = []
            else:
                out.append(opener + "\n".join(code) + "</code></pre>")
                code = None
            continue
        (out if code is None else code).append(escape(line))
    if code is not None:
        out.append(opener + "\n".join(code) + "</code></pre>")
    return "\n".join(out)


# --- field access that never raises: producers of other versions may send anything ---------------


def _text(data: dict[str, Any], key: str, default: str = "") -> str:
    value = data.get(key)
    return default if value is None else str(value)


def _int(data: dict[str, Any], key: str) -> int | None:
    value = data.get(key)
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value)
    return None


def _flag(data: dict[str, Any], key: str) -> bool:
    value = data.get(key)
    return value is True or (isinstance(value, str) and value.lower() in ("1", "true", "yes"))


def _task(event: Event) -> str:
    return event.task or "?"


def _agent(event: Event) -> str:
    return event.agent or event.sender


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _with_msg(head: str, event: Event) -> str:
    return f"{head}: {event.msg.strip()}" if event.msg.strip() else head


def _lines(*lines: str | None) -> str:
    return "\n".join(line for line in lines if line)


# --- tasks ------------------------------------------------------------------------------------------


def _priority(event: Event) -> str:
    p = _int(event.data, "priority")
    return "" if p is None else f" (priority {p})"


def _task_added(event: Event) -> _View:
    schedule = _text(event.data, "schedule")
    by = f" by schedule {schedule}" if schedule else ""
    return _View(_lines(f"+ {_task(event)} added{_priority(event)}{by}", _text(event.data, "title")))


def _task_ready(event: Event) -> _View:
    return _View(_lines(f"→ {_task(event)} ready{_priority(event)}", _text(event.data, "title")))


def _task_claimed(event: Event) -> _View:
    attempt, most = _int(event.data, "attempt"), _int(event.data, "max_attempts")
    again = f" (attempt {attempt}/{most})" if attempt and most and attempt > 1 else ""
    branch = _text(event.data, "branch")
    return _View(
        _lines(
            f"→ {_task(event)} claimed by {_agent(event)}{again}",
            _text(event.data, "title"),
            f"Branch: {branch}" if branch else None,
        )
    )


def _task_done(event: Event) -> _View:
    summary = _text(event.data, "summary").strip()
    if summary:
        return _View(f'✓ {_task(event)} completed: "{summary}"')
    return _View(f"✓ {_task(event)} completed by {_agent(event)}")


def _task_failed(event: Event) -> _View:
    attempt, most = _int(event.data, "attempt"), _int(event.data, "max_attempts")
    where = f" (attempt {attempt}/{most})" if attempt and most else ""
    reason = _text(event.data, "reason").strip() or "no reason given"
    task = _task(event)
    if _flag(event.data, "will_retry"):
        after = f"→ {task} back to ready (will retry)"
    else:
        after = f"✗ {task} stays failed (no attempts left)"
    return _View(_lines(f"⚠ {task} failed{where}: {reason}", after))


# --- merges -----------------------------------------------------------------------------------------


def _merge_ready(event: Event) -> _View:
    head = f"→ Merging {_text(event.data, 'branch', '?')} → {_text(event.data, 'target', '?')}..."
    place = event.data.get("position")
    order = _text(event.data, "order")
    if not order and not (isinstance(place, int) and place > 1):
        return _View(head)
    return _View(_lines(head, f"Queue position {place}" + (f": goes {order}" if order else "")))


def _merge_merged(event: Event) -> _View:
    sha = _text(event.data, "sha")[:7]
    branch = _text(event.data, "branch")
    return _View(
        _lines(
            f"✓ Merged → {_text(event.data, 'target', '?')}" + (f" ({sha})" if sha else ""),
            f"Branch: {branch}" if branch else None,
        )
    )


def _merge_conflict(event: Event) -> _View:
    files = event.data.get("files")
    names = [str(f) for f in files] if isinstance(files, list) else []
    lines = [f"⚠ Merge conflict on {_text(event.data, 'branch', '?')}"]
    if names:
        lines.append("Conflicted files:")
        lines.extend(f"  - {name}" for name in names)
    return _View("\n".join(lines))


def _merge_failed(event: Event) -> _View:
    error = _text(event.data, "error").strip() or "unknown error"
    branch, target = _text(event.data, "branch", "?"), _text(event.data, "target", "?")
    return _View(f"⚠ Merge of {branch} → {target} failed: {error}")


def _conflict_risk(event: Event) -> _View:
    agent, other, branch = _agent(event), _text(event.data, "other_agent"), _text(event.data, "branch")
    theirs = other or branch or "?"
    head = (
        f"⚠ Conflict risk: {agent} and {other} change the same code (it will not merge cleanly)"
        if other
        else f"⚠ Conflict risk: {agent}'s change collides with branch {branch or '?'}"
    )
    lines = [head]
    conflicts = event.data.get("conflicts")
    for item in conflicts if isinstance(conflicts, list) else []:
        if isinstance(item, dict):
            lines.extend(_conflict_lines(item, agent, theirs))
    if len(lines) == 1:
        lines.extend(f"• {name}" for name in _strings(event.data.get("files")))
    more = _int(event.data, "more_files")
    if more:
        lines.append(f"… and {_plural(more, 'more file')}")
    return _View("\n".join(lines))


def _conflict_lines(item: dict[str, Any], agent: str, other: str) -> list[str]:
    hunks = [h for h in item.get("hunks") or [] if isinstance(h, dict)]
    where = ", ".join(str(h.get("line")) for h in hunks)
    place = f", around line{'s' if len(hunks) > 1 else ''} {where}" if hunks else ""
    lines = [f"• {_text(item, 'path', '?')}{place} ({_text(item, 'kind', 'content')})"]
    for hunk in hunks[:1]:
        lines.append(f"  {agent}: {_gist(hunk.get('ours'))}")
        lines.append(f"  {other}: {_gist(hunk.get('theirs'))}")
    return lines


def _strings(value: object) -> list[str]:
    return [str(v) for v in value] if isinstance(value, list) else []


def _gist(lines: object) -> str:
    shown = " ⏎ ".join(line.strip() for line in _strings(lines)[:3] if line.strip())
    return shorten(shown, 120) if shown else "(deleted)"


# --- auto mode --------------------------------------------------------------------------------------


def _auto_started(event: Event) -> _View:
    if event.msg.strip():  # the loop words it itself (a resumed loop says so)
        return _View(event.msg.strip())
    ready, blocked = _int(event.data, "ready") or 0, _int(event.data, "blocked") or 0
    mode = " (a worktree per task)" if _flag(event.data, "worktrees") else ""
    return _View(
        f"Auto mode started for project {event.project or '?'}{mode}\n"
        f"{_plural(ready, 'task')} ready, {blocked} blocked"
    )


def _count(data: dict[str, Any], key: str) -> int:
    """A number, or how many ids a list holds (the worker sends the lists of tasks)."""
    value = data.get(key)
    return len(value) if isinstance(value, list) else _int(data, key) or 0


def _auto_finished(event: Event) -> _View:
    if event.msg.strip():
        return _View(f"→ {event.msg.strip()}")
    done, failed = _count(event.data, "done"), _count(event.data, "failed")
    total = _count(event.data, "total") or _count(event.data, "taken")
    tail = f" {failed} failed." if failed else ""
    return _View(f"→ Queue empty. Auto mode finished. {done}/{total} tasks done.{tail}")


def _auto_paused(event: Event) -> _View:
    if event.msg.strip():
        return _View(f"⏸ {event.msg.strip()}")
    return _View(f"⏸ Auto mode paused: {_text(event.data, 'reason').strip() or 'no reason given'}")


def _auto_stopped(event: Event) -> _View:
    if event.msg.strip():
        return _View(f"⏹ {event.msg.strip()}")
    return _View("⏹ Auto mode stopped. The current task stays claimed.")


# --- agents -----------------------------------------------------------------------------------------


def _agent_buttons(agent: str) -> tuple[tuple[Button, ...], ...]:
    labels = (
        (Action.DIFF, "Diff"),
        (Action.MERGE, "Merge"),
        (Action.KILL, "Kill"),
        (Action.LOOK, "Look"),
        (Action.SHOT, "Screenshot"),
    )
    row = []
    for action, label in labels:
        data = Callback(action, agent).encode()
        if data is None:
            return ()
        row.append(Button(label, data))
    return (tuple(row),)


def _rows(rows: tuple[tuple[tuple[str, str], ...], ...]) -> tuple[tuple[Button, ...], ...]:
    return tuple(tuple(Button(label, data) for label, data in row) for row in rows)


def _permission(event: Event) -> _View:
    text, rows = dialog_view(event, _agent(event))
    return _View(text, _rows(rows))


SAYS_LAST_MESSAGE = frozenset({"error"})  # event types whose message shows the agent's last message


def _error(event: Event) -> _View:
    kind = _text(event.data, "kind", "other")
    said = _text(event.data, "last_message").strip()
    if kind == "rate_limit":  # a plain 429: the plan's usage limit is a `limited` event of its own
        headline = f"⚠ {_agent(event)}: the turn ended on a rate limit (429), not the plan's usage limit"
    else:
        headline = f"⚠ {_agent(event)}: the turn ended with an API error ({kind})"
    return _View(_lines(headline, said or None))


def _question_buttons(event: Event) -> tuple[tuple[Button, ...], ...]:
    """An option per row. A dialog's question (its `kind`: ask, elicitation) is answered by the option's
    number, as `ib answer` picks it; a question of `ib ask` by the option's text, sent to the agent."""
    if _text(event.data, "kind") or _text(event.data, "prompt_id"):
        return _rows(option_rows(event))
    options = drawn_options(event.data)
    question_id = _text(event.data, "question_id")
    if not question_id:
        return ()
    rows = []
    for index, option in enumerate(options[:MAX_OPTIONS]):
        data = Callback(Action.ANSWER, question_id, index).encode()
        if data is None:
            return ()
        rows.append((Button(shorten(option.label, BUTTON_LABEL_WIDTH) or str(index + 1), data),))
    return tuple(rows)


def _complete(event: Event) -> _View:
    """Buttons only for an agent: a plain `ib notify` (sender `unknown`, no agent) has none to act on."""
    buttons = _agent_buttons(event.agent) if event.agent else ()
    return _View(_with_msg(f"✓ {_agent(event)} completed", event), buttons)


def _waiting(event: Event) -> _View:
    return _View(_with_msg(f"⏳ {_agent(event)} is waiting", event))


def _question(event: Event) -> _View:
    asked = _text(event.data, "question").strip()  # the bare question; msg repeats "Agent X asks:"
    head = f"❓ {_agent(event)} asks"
    view = f"{head}: {asked}" if asked else _with_msg(head, event)
    return _View(view, _question_buttons(event))


def _spawned(event: Event) -> _View:
    goal = _text(event.data, "goal").strip()
    manager, worktree = _text(event.data, "manager"), _text(event.data, "worktree")
    cli = _text(event.data, "cli")
    return _View(
        _lines(
            f"→ {_agent(event)} spawned" + (f": {goal}" if goal else ""),
            f"CLI: {cli}" if cli else None,
            f"Manager: {manager}" if manager else None,
            f"Worktree: {worktree}" if worktree else None,
        )
    )


def _state(event: Event) -> _View:
    before, after = _text(event.data, "from_state", "?"), _text(event.data, "to_state", "?")
    worker = _text(event.data, "worker", "")
    if worker and "unreachable" in (before, after):  # its worker died, or came back
        why = f"worker {worker} stopped answering" if after == "unreachable" else f"worker {worker} is back"
        return _View(f"{_agent(event)}: {before} → {after} ({why})")
    return _View(f"{_agent(event)}: {before} → {after}")


def _lifecycle(icon: str, verb: str, told: bool = False) -> Callable[[Event], _View]:
    """`told`: the event's own sentence names the agent and what happened ("x stopped (…)", "x killed"),
    so it is shown as it is rather than after the same words again."""

    def view(event: Event) -> _View:
        head, said = f"{_agent(event)} {verb}", event.msg.strip()
        if told and said.startswith(f"{_agent(event)} "):
            return _View(f"{icon} {said}")
        return _View(f"{icon} {head}: {said}" if said else f"{icon} {head}")

    return view


def _limited(event: Event) -> _View:
    """ "limited until 15:00" (the reset in the worker's local time), with the window and any note."""
    until = _text(event.data, "until", "its reset")
    window = _text(event.data, "window")
    note = _text(event.data, "note")
    lines = [f"⏳ {_agent(event)} limited until {until}" + (f" ({window} limit)" if window else "")]
    if note:
        lines.append(note)
    lines.append("It goes on by itself at the reset.")
    return _View("\n".join(lines))


def _resumed(event: Event) -> _View:
    window = _text(event.data, "window")
    return _View(f"▶ {_agent(event)} resumed" + (f": its {window} limit has reset" if window else ""))


def _other(event: Event) -> _View:
    return _View(_with_msg(f"• {event.type} from {_agent(event)}", event))


_RENDERERS: dict[str, Callable[[Event], _View]] = {
    "task_added": _task_added,
    "task_ready": _task_ready,
    "task_claimed": _task_claimed,
    "task_done": _task_done,
    "task_failed": _task_failed,
    "merge_ready": _merge_ready,
    "merge_merged": _merge_merged,
    "merge_conflict": _merge_conflict,
    "merge_failed": _merge_failed,
    "conflict_risk": _conflict_risk,
    "auto_started": _auto_started,
    "auto_finished": _auto_finished,
    "auto_paused": _auto_paused,
    "auto_stopped": _auto_stopped,
    "complete": _complete,
    "waiting": _waiting,
    "question": _question,
    "spawned": _spawned,
    "state": _state,
    "stopped": _lifecycle("⏹", "stopped", told=True),
    "killed": _lifecycle("✗", "was killed", told=True),
    "merged": _lifecycle("✓", "merged", told=True),
    "rate_limited": _lifecycle("⏳", "is rate limited"),
    "limited": _limited,
    "resumed": _resumed,
    "permission": _permission,
    "dialog_detail": _permission,  # a dialog's message, should the detail come before the dialog's event
    "error": _error,
    "notification": _lifecycle("🔔", "notifies"),
    "message": _lifecycle("💬", "says"),
}
