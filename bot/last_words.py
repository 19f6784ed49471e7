"""A turn's end waits for the turn's last words in the agent's topic: the Stop hook tells the end at
once, while the worker's transcript tail publishes the words about a second later, so shown as read
the words would land below "⏳ … is waiting".

Pure. An event that carries the agent's last message (`data.last_message`) is held in the agent's
topic until the output feed has queued a text item that ends with those words, or until a deadline
(the words may never come: the tail is behind, or its worker is down). Whatever else comes for that
topic meanwhile waits behind it, so the topic keeps the events' order.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Generic, TypeVar

HOLD_SECONDS = 5.0
TAIL = 80  # characters of the words compared (the hook's copy and the transcript's, whitespace aside)

T = TypeVar("T")


def words_tail(text: str) -> str:
    """The end of `text`, whitespace normalised: what a text item and the hook's copy share."""
    return " ".join(text.split())[-TAIL:]


@dataclass(frozen=True)
class _Held(Generic[T]):
    item: T
    agent: str
    tail: str  # "" : waits for nothing but what is held before it
    deadline: float


class LastWords(Generic[T]):
    """Held messages per topic, in order; each waits for its agent's words, or its deadline."""

    def __init__(self) -> None:
        self._said: dict[str, str] = {}  # agent → the end of its latest text item
        self._held: dict[int | None, deque[_Held[T]]] = {}

    def hold(self, thread: int | None, item: T, agent: str, last_message: str, deadline: float) -> list[T]:
        """`item` for `thread`, ending a turn of `agent` with `last_message` ("" : it ends none): what
        may be queued now (it, or nothing while it waits)."""
        tail = words_tail(last_message)
        queue = self._held.get(thread)
        if queue is None and (not tail or self._heard(agent, tail)):
            return [item]
        self._held.setdefault(thread, deque()).append(_Held(item, agent, tail, deadline))
        return self._release(thread, None)

    def said(self, agent: str, text: str) -> list[T]:
        """A text item of `agent` was queued: what it lets go."""
        self._said[agent] = words_tail(text)
        released: list[T] = []
        for thread in list(self._held):
            released += self._release(thread, None)
        return released

    def due(self, now: float) -> list[T]:
        """What waited long enough: it goes without its words."""
        released: list[T] = []
        for thread in list(self._held):
            released += self._release(thread, now)
        return released

    def _heard(self, agent: str, tail: str) -> bool:
        """Whether the agent's latest text item ends the words (a message of several text blocks
        ends with its last one)."""
        said = self._said.get(agent, "")
        return bool(said) and tail.endswith(said)

    def next_deadline(self) -> float | None:
        return min((queue[0].deadline for queue in self._held.values()), default=None)

    def _release(self, thread: int | None, now: float | None) -> list[T]:
        queue = self._held[thread]
        released: list[T] = []
        while queue:
            head = queue[0]
            late = now is not None and now >= head.deadline
            if head.tail and not self._heard(head.agent, head.tail) and not late:
                break
            released.append(queue.popleft().item)
        if not queue:
            del self._held[thread]
        return released
