"""What waits on a person, and what a digest says of the rest: the routine events the chat's budget cannot
carry one by one are folded into one message per topic that counts their subjects by where they are now
("12 agents: 9 running, 2 waiting, 1 complete"). Pure.
"""

from __future__ import annotations

import html
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from bus.events.event_model import Event
from bus.inbox.attention_rules import NEEDS_YOU

WAITS_ON_PERSON: frozenset[str] = frozenset(
    {*NEEDS_YOU, "dialog_detail", "budget_exceeded", "auto_paused", "plan_ready", "plan_failed"}
    | {"merge_conflict", "merge_failed", "task_failed"}
)
"""Event types a person must act on: shown first (`Outgoing.urgent`) and never folded. The needs-you of
the attention items (permissions, questions, waiting, errors, usage limits, runaways), a dialog's detail,
budget and /auto pauses, plans to approve, and merges and tasks that failed."""

DIGEST_MARK = "🗂"


@dataclass(frozen=True)
class Fold:
    """What one routine event says in a digest: its subject (`noun` and id) is now `status`."""

    noun: str  # agent | task | merge
    subject: str
    status: str


def _agent_is(status: str) -> Callable[[Event], Fold | None]:
    return lambda e: Fold("agent", e.agent, status) if e.agent else None


def _task_is(status: str) -> Callable[[Event], Fold | None]:
    return lambda e: Fold("task", e.task, status) if e.task else None


def _merge_is(status: str) -> Callable[[Event], Fold | None]:
    return lambda e: Fold("merge", e.task or e.agent or "", status) if e.task or e.agent else None


def _state(event: Event) -> Fold | None:
    to_state = str(event.data.get("to_state") or "")
    return Fold("agent", event.agent, to_state) if event.agent and to_state else None


_FOLDS: dict[str, Callable[[Event], Fold | None]] = {
    "state": _state,
    "spawned": _agent_is("spawned"),
    "complete": _agent_is("complete"),
    "resumed": _agent_is("running"),
    "stopped": _agent_is("stopped"),
    "killed": _agent_is("killed"),
    "merged": _agent_is("merged"),
    "rate_limited": _agent_is("rate limited"),
    "budget_warning": _agent_is("near its budget"),
    "notification": _agent_is("notified"),
    "task_added": _task_is("added"),
    "task_ready": _task_is("ready"),
    "task_claimed": _task_is("claimed"),
    "task_done": _task_is("done"),
    "merge_ready": _merge_is("ready"),
    "merge_merged": _merge_is("merged"),
}


def waits_on_person(event_type: str) -> bool:
    return event_type in WAITS_ON_PERSON


def fold_of(event: Event) -> Fold | None:
    """How `event` reads in a digest; None: it is never folded (it waits on a person, or it is words of
    an agent or a kind a digest cannot count)."""
    if waits_on_person(event.type):
        return None
    fold = _FOLDS.get(event.type)
    return fold(event) if fold is not None else None


def render_digest(latest: Mapping[tuple[str, str], str], events: int) -> str:
    """The digest's text (Telegram HTML): each kind of subject counted by its latest status, most first,
    and how many events it folds."""
    by_noun: dict[str, Counter[str]] = {}
    for (noun, _subject), status in latest.items():
        by_noun.setdefault(noun, Counter())[status] += 1
    lines = []
    for noun, counts in by_noun.items():
        total = sum(counts.values())
        parts = ", ".join(f"{n} {html.escape(status)}" for status, n in sorted(counts.items(), key=_most))
        lines.append(f"{DIGEST_MARK} <b>{total} {noun}{'' if total == 1 else 's'}</b>: {parts}")
    plural = "" if events == 1 else "s"
    lines.append(
        f"<i>{events} event{plural} folded: more than Telegram's limits carry one by one"
        " (each is in <code>ib events</code>)</i>"
    )
    return "\n".join(lines)


def _most(item: tuple[str, int]) -> tuple[int, str]:
    status, n = item
    return (-n, status)
