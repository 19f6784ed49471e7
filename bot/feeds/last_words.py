"""A turn's last words come before its end in the agent's topic, and only once.

The Stop hook tells the end at once and carries the agent's last message (`data.last_message`); the
worker's transcript tail publishes the turn's output (the same words among it) on the agent's output
stream. The worker reads the transcript at once when it reads a turn's end, and then writes a `turn_end`
item naming the end's event on that stream: from there on the bot knows the tail holds all the turn's
output the transcript had. Pure.

- The tail's copy of the words came (a text item that ends them): the end goes, after it.
- The tail went through the turn (its `turn_end` item) without the words, the transcript lagging: the
  hook's copy is shown, then the end; the tail's later copy is not shown again (text items of the agent
  that repeat parts of it, until the item that ends it or an item written more than a second after the
  end: a later turn's).
- Neither within `HOLD_SECONDS` (the worker is down or far behind): the hook's copy and the end go
  anyway; what of the turn comes later shows below them.
- The hook's copy may be cut (it keeps the last `CUT` characters): the end waits the whole
  `HOLD_SECONDS` for the tail's full text; then the copy is shown with "…" in front, and the full text
  still shows when it comes (nothing of it is lost; its end is seen twice).
- Whatever else comes for that topic meanwhile waits behind a held end, so the topic keeps the events'
  order. An end that ends no turn (no words) waits only for what is held before it.
"""

from __future__ import annotations

import datetime as dt
from collections import deque
from dataclasses import dataclass
from typing import Generic, TypeVar

HOLD_SECONDS = 5.0
TAIL = 80  # characters of the words compared (the hook's copy and the transcript's, whitespace aside)
CUT = 2000  # the Stop hook keeps this many last characters of the message (worker/hooks/stop.py)
LATER_TURN = 1.0  # seconds after an end's time (whole seconds) from which an item is of a later turn

T = TypeVar("T")


def words_tail(text: str) -> str:
    """The end of `text`, whitespace normalised: what a text item and the hook's copy share."""
    return " ".join(text.split())[-TAIL:]


def flat(text: str) -> str:
    return " ".join(text.split())


def seconds(ts: str) -> float | None:
    """Unix time of an ISO 8601 timestamp (an event's, a transcript item's); None if there is none."""
    try:
        at = dt.datetime.fromisoformat(ts)
    except ValueError:
        return None
    return at.timestamp() if at.tzinfo is not None else None


def stream_id(entry_id: str) -> tuple[int, int]:
    """A stream entry id (`millis-seq`) in its order; (0, 0) for what is none."""
    millis, _, seq = entry_id.partition("-")
    return (int(millis), int(seq or 0)) if millis.isdigit() and (seq or "0").isdigit() else (0, 0)


@dataclass(frozen=True)
class Release(Generic[T]):
    """`item` may be queued now, after `words` (the hook's copy of the turn's last words; "" : none)."""

    item: T
    words: str = ""


@dataclass(frozen=True)
class _Held(Generic[T]):
    item: T
    agent: str
    words: str  # the hook's copy ("" : ends no turn; waits for nothing but what is held before it)
    end: tuple[int, int]  # the end's event id
    ended: float | None  # when the turn ended (the event's time)
    deadline: float

    @property
    def whole(self) -> bool:
        return len(self.words) < CUT


@dataclass(frozen=True)
class _Shown:
    words: str  # flat
    ended: float | None


class LastWords(Generic[T]):
    """Held messages per topic, in order; each waits for its agent's words, or its deadline."""

    def __init__(self) -> None:
        self._said: dict[str, str] = {}  # agent → the end of its latest text item, until an end uses it
        self._shown: dict[str, _Shown] = {}  # agent → words shown from the hook, the tail's copy to come
        self._repeated: dict[str, str] = {}  # agent → the text item `repeats` just kept from showing
        self._through: dict[str, tuple[int, int]] = {}  # agent → the latest end its tail went through
        self._held: dict[int | None, deque[_Held[T]]] = {}

    def hold(
        self, thread: int | None, item: T, agent: str, last_message: str, end: str, ended: str, now: float
    ) -> list[Release[T]]:
        """`item` for `thread`: event `end`, ending a turn of `agent` with `last_message` ("" : it ends
        none) at time `ended` (ISO 8601), read at `now` (the clock of `due`). What may be queued now."""
        words = last_message if last_message.strip() else ""
        held = _Held(item, agent, words, stream_id(end), seconds(ended), now + HOLD_SECONDS)
        self._held.setdefault(thread, deque()).append(held)
        return self._release(thread, None)

    def through(self, agent: str, end: str) -> list[Release[T]]:
        """The worker's tail went through the agent's turn that event `end` ended (its `turn_end` item
        was queued): what that lets go."""
        self._through[agent] = max(self._through.get(agent, (0, 0)), stream_id(end))
        return self._release_all(None)

    def repeats(self, agent: str, kind: str, text: str, ts: str) -> bool:
        """Whether an output item of `agent` (written at `ts`) repeats words already shown from the
        hook's copy: then it is not shown again."""
        shown = self._shown.get(agent)
        if shown is None:
            return False
        written = seconds(ts)
        if written is not None and shown.ended is not None and written >= shown.ended + LATER_TURN:
            del self._shown[agent]  # a later turn's: that turn's copy is not coming any more
            return False
        words = flat(text)
        if kind != "text" or not words or words not in shown.words:
            return False
        if shown.words.endswith(words):
            del self._shown[agent]  # the last of it
        self._repeated[agent] = text
        return True

    def said(self, agent: str, text: str) -> list[Release[T]]:
        """A text item of `agent` was queued (or kept from showing by `repeats`): what it lets go."""
        if self._repeated.pop(agent, None) == text:
            return []
        self._said[agent] = words_tail(text)
        return self._release_all(None)

    def due(self, now: float) -> list[Release[T]]:
        """What waited long enough: it goes with the hook's copy of its words."""
        return self._release_all(now)

    def next_deadline(self) -> float | None:
        return min((queue[0].deadline for queue in self._held.values()), default=None)

    def _heard(self, agent: str, words: str) -> bool:
        """Whether the agent's latest text item ends the words (a message of several text blocks ends
        with its last one); an item ends one turn only."""
        said = self._said.get(agent, "")
        if not said or not words_tail(words).endswith(said):
            return False
        del self._said[agent]
        return True

    def _release_all(self, now: float | None) -> list[Release[T]]:
        released: list[Release[T]] = []
        for thread in list(self._held):
            released += self._release(thread, now)
        return released

    def _release(self, thread: int | None, now: float | None) -> list[Release[T]]:
        queue = self._held[thread]
        released: list[Release[T]] = []
        while queue:
            head = queue[0]
            if not head.words or self._heard(head.agent, head.words):
                released.append(Release(queue.popleft().item))
                continue
            through = head.end <= self._through.get(head.agent, (0, 0)) and head.end != (0, 0)
            if not (through and head.whole) and (now is None or now < head.deadline):
                break  # the transcript's copy (or its full text) may still come
            queue.popleft()
            self._shown[head.agent] = _Shown(flat(head.words), head.ended)
            released.append(Release(head.item, head.words if head.whole else "…" + head.words.lstrip()))
        if not queue:
            del self._held[thread]
        return released
