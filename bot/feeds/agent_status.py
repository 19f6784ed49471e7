"""What the live status line of an agent's topic says, from the agent's output items and its events,
whichever of the two streams the bot happens to read first.

Pure. The two streams are read apart, so a short turn's end event often arrives before the output item
that started the turn. Both carry the time they happened (the transcript's, the event's), and those
times decide: a turn start older than the latest turn end is a turn already over; a turn end older than
the current turn's start belongs to an earlier turn. A dialog waiting for the person says so, in a line
that does not change (it costs no edits however long the person takes).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace

from bus.events.activity import (
    IDLE_STATES,
    TURN_END,
    Activity,
    activity_line,
    end_turn,
    ends_turn,
    fold_item,
    item_time,
)
from bus.events.event_model import Event

SAME_MOMENT = 2.0  # seconds from an event's `ts` within which its stream id tells the same moment
WHOLE_SECOND = 0.999
APPROVAL = "🔐 waiting for your approval"
ANSWER = "❓ waiting for your answer"


@dataclass(frozen=True)
class AgentStatus:
    """One agent's turn as the status line sees it."""

    activity: Activity = field(default_factory=Activity)
    ended_at: float = -math.inf  # when the latest turn end told happened
    asking: str = ""  # a dialog waits for the person: the line says this instead
    asked_at: float = -math.inf

    @property
    def live(self) -> bool:
        """Whether the line changes as time passes (a working turn, no dialog waiting)."""
        return self.activity.working and not self.asking


def on_item(status: AgentStatus, fields: Mapping[str, str], now: float) -> AgentStatus:
    """The status after one output item (an `out:<agent>` entry); items without a time count as now."""
    at = item_time(fields.get("ts", ""), now)
    if fields.get("kind") == TURN_END:
        return status  # the worker's, not the agent's: it tells nothing of what the agent does
    if fields.get("kind") == "prompt" and at <= status.ended_at:
        return status  # the end of this turn was read first: it is over already
    after = replace(status, activity=fold_item(status.activity, fields, now))
    if after.asking and at > after.asked_at:
        after = replace(after, asking="")  # the agent went on: the dialog was answered
    return after


def event_time(event: Event, now: float) -> float:
    """When `event` happened. Its `ts` has whole seconds only, too coarse beside a transcript's
    milliseconds (a short turn starts and ends within a second); its stream id has the milliseconds at
    which Redis took it, which is that moment unless the event came late (from a spool). Without a
    usable id, the end of the stated second: a turn end then reads as late rather than early, which at
    worst costs the next turn its line, never leaves a stale one."""
    stated = item_time(event.ts, now)
    millis = event.id.partition("-")[0]
    taken = int(millis) / 1000 if millis.isdigit() else None
    if taken is not None and stated - SAME_MOMENT < taken < stated + SAME_MOMENT:
        return taken
    return stated + WHOLE_SECOND if stated.is_integer() else stated


def on_event(status: AgentStatus, event: Event, now: float) -> AgentStatus:
    """The status after one of the agent's events."""
    at = event_time(event, now)
    started = status.activity.turn_started
    if started is not None and at < started:
        return status  # about an earlier turn
    asking = dialog_line(event)
    if asking:
        return replace(status, asking=asking, asked_at=at)
    if ends_turn(event.type, event.data):
        return replace(
            status, activity=end_turn(status.activity), ended_at=max(at, status.ended_at), asking=""
        )
    if status.asking and event.type == "state" and at >= status.asked_at:
        return replace(status, asking="")  # the dialog closed: the pane shows the agent at work
    return status


def dialog_line(event: Event) -> str:
    """The line while `event`'s dialog waits; "" when the event is no dialog. A question asked with
    `ib ask` is no dialog: the agent's turn goes on to its end."""
    if event.type == "permission" or (event.type == "state" and event.data.get("to_state") == "permission"):
        return APPROVAL
    if event.type == "question" and event.data.get("prompt_id"):
        return ANSWER
    return ""


def seeded(status: AgentStatus, items: Iterable[Mapping[str, str]], state: str, now: float) -> AgentStatus:
    """An agent met mid-stream: its latest output items (oldest first) and its state. A working state
    with no prompt among the items is a turn whose start fell outside them (its length unknown). No state
    (no record) is an agent torn down while the bot was away: its last turn is over (a restarted bot
    showed "⚙ thinking" under the note of an agent merged meanwhile)."""
    idle = state in IDLE_STATES or not state
    kept = status.activity
    status = replace(status, activity=Activity(working=not idle, tokens=kept.tokens, usd=kept.usd))
    for fields in items:
        status = on_item(status, fields, now)
    if idle:
        status = replace(status, activity=end_turn(status.activity), asking="")
    elif state == "permission" and not status.asking:
        status = replace(status, asking=APPROVAL, asked_at=now)
    return status


def status_line(status: AgentStatus, now: float, young: float) -> str:
    """The line shown: "" when the agent is not working, or its turn is under `young` seconds old (a
    short turn is all in its output message); the dialog's line while one waits."""
    if status.asking:
        return status.asking
    started = status.activity.turn_started
    if started is not None and now - started < young:
        return ""
    return activity_line(status.activity, now)
