"""What waits on a person, and when it is repeated louder: which events open an attention item, which
close it, and the escalation schedule. Pure: `bus.inbox.attention` keeps the items, the bot delivers them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol, TypeVar

from bus.inbox.ages import format_age

NEEDS_YOU: tuple[str, ...] = ("permission", "question", "waiting", "error", "limited", "runaway")
"""Event types that wait on a person until answered. A new kind is one more name here."""

SAYS_MOST: tuple[str, ...] = ("permission", "question", "error", "limited", "runaway", "waiting")
"""Of an agent's open items, the one repeated is the first kind here: a turn that ended on a question
raises `question` and `waiting` for one thing the person must do, which is said once, as the question."""

MOVED_ON_TYPES = frozenset({"complete", "stopped", "killed", "merged"})
"""Event types that say the agent went past whatever it waited for."""

MOVED_ON_STATES = frozenset({"running", "compacting", "stopped"})
"""`state` events to these states say the same: the agent works again (or is gone)."""

DM, CHANNELS = "dm", "channels"


def opens(event_type: str, agent: str | None) -> bool:
    """Whether an event of this type opens an item: a "needs you" of an agent (nobody could answer
    one that names none)."""
    return bool(agent) and event_type in NEEDS_YOU


def closes(event_type: str, agent: str | None, data: Mapping[str, object]) -> bool:
    """Whether an event tells that its agent moved on, answering what it waited for before it."""
    if not agent:
        return False
    if event_type == "state":
        return str(data.get("to_state", "")) in MOVED_ON_STATES
    return event_type in MOVED_ON_TYPES


class _Open(Protocol):
    @property
    def agent(self) -> str: ...
    @property
    def kind(self) -> str: ...
    @property
    def raised_at(self) -> float: ...


Open = TypeVar("Open", bound=_Open)


def one_per_agent(items: Sequence[Open]) -> list[Open]:
    """The item to repeat for each agent (SAYS_MOST's order, then the oldest), in the items' order."""
    rank = {kind: i for i, kind in enumerate(SAYS_MOST)}
    best: dict[str, Open] = {}
    for item in items:
        held = best.get(item.agent)
        key = (rank.get(item.kind, len(rank)), item.raised_at)
        if held is None or key < (rank.get(held.kind, len(rank)), held.raised_at):
            best[item.agent] = item
    chosen = {id(item) for item in best.values()}
    return [item for item in items if id(item) in chosen]


def slot(agent: str, kind: str) -> str:
    """The one open item an agent may have of each kind: a repeat of the same kind joins it."""
    return f"{agent}|{kind}"


def stream_order(entry_id: str) -> tuple[int, int]:
    """A stream id (`ms-seq`) as a pair that sorts as Redis orders entries; (0, 0) when it is none."""
    ms, _, seq = entry_id.partition("-")
    try:
        return int(ms), int(seq or 0)
    except ValueError:
        return 0, 0


@dataclass(frozen=True)
class Schedule:
    """When an unanswered item is repeated: as a direct message `dm_after` seconds after it was raised,
    through the configured channels `channels_after` seconds after; each level again every `repeat`
    seconds (0: once). A level set to None is not used (no allowed users, no channel URLs)."""

    dm_after: float | None
    channels_after: float | None
    repeat: float = 0.0

    def starts(self) -> dict[str, float]:
        """Each level in use and the age at which it starts."""
        found = {DM: self.dm_after, CHANNELS: self.channels_after}
        return {level: after for level, after in found.items() if after is not None}


@dataclass(frozen=True)
class Round:
    """One repetition of one level: the targets of a round are sent at most once each."""

    level: str
    number: int

    def target(self, name: str) -> str:
        """The delivery mark of one target (a user, a channel) in this round."""
        return f"{self.level}:{self.number}:{name}"


def due(schedule: Schedule, age: float) -> list[Round]:
    """The round of each level an item `age` seconds old is at: the latest one reached, never the
    missed ones before it (a bot that was down does not send a burst)."""
    rounds = []
    for level, after in schedule.starts().items():
        if age < after:
            continue
        number = math.floor((age - after) / schedule.repeat) if schedule.repeat > 0 else 0
        rounds.append(Round(level, number))
    return rounds


def next_round_in(schedule: Schedule, age: float) -> float | None:
    """Seconds from `age` until a level starts or repeats next; None when nothing more will come."""
    waits = []
    for after in schedule.starts().values():
        if age < after:
            waits.append(after - age)
        elif schedule.repeat > 0:
            waits.append(schedule.repeat - (age - after) % schedule.repeat)
    return min(waits) if waits else None


_HOW = {
    "permission": "ib approve {agent} / ib deny {agent}, or the buttons in its topic",
    "question": "ib questions, then ib answer ID TEXT, or a reply in its topic",
    "limited": "it goes on by itself at the reset; ib attention lists the rest",
}


def how_to_answer(kind: str, agent: str) -> str:
    """The command (or tap) that answers an item of this kind. Pure."""
    return _HOW.get(kind, 'ib send {agent} "..." or a message in its topic').format(agent=agent)


def reminder(kind: str, agent: str, msg: str, waited: float) -> tuple[str, str]:
    """The title and body of an escalation: what waits, for how long, and how to answer it. Pure."""
    title = f"{agent} has waited {format_age(waited)} for you ({kind})"
    body = f"{msg or kind}\nAnswer: {how_to_answer(kind, agent)}"
    return title, body
