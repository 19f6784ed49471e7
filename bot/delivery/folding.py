"""Folding as the outbound queue keeps it: when a chat's minute budget cannot keep up with its routine
events, each topic's routine events go into one digest message, edited in place, instead of one message
each; once the flow is calm again, one message per event. Pure: times are passed in.

Routine means an event rendering with a `Fold` note (bot.render.digest_render): never what waits on a
person (`urgent`), never a dialog, a question's anchor, buttons or a document.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from bot.render.digest_render import render_digest
from bot.render.split import telegram_length

if TYPE_CHECKING:
    from bot.delivery.outgoing import Outgoing
    from bot.delivery.pacing import Limits, Pacer

TopicKey = tuple[int, int | None]  # (chat, message_thread_id), as the outbox keys its queues

FOLD_HORIZON = 60.0
"""Telegram seconds. A chat folds when its routine backlog needs more messages than its budget sends in
this long: more than the whole minute's budget (20) waiting means the budget cannot keep up — a routine
event at the back waits over a minute, stale when it shows, and the messages in front of it spend the
window a question will need. A digest says the same in one message edited every DIGEST_EVERY. A shorter
horizon would fold bursts the budget clears within its own minute (20 topics with one event each)."""

UNFOLD_SHARE = 4
"""A folding chat unfolds once the routine events that arrived in the last minute (the budget's window)
number at most a quarter of the budget (5 at 20 a minute), which it then carries with room to spare. The
gap between the two thresholds (20 messages waiting, 5 events a minute) and the minute the arrivals are
counted over are the hysteresis: a chat at the edge does not flap between digests and messages."""

DIGEST_EVERY = 10.0  # Telegram seconds between two edits of one topic's digest (more piles up in it)
DIGEST_RESERVE = 8  # a digest never spends the minute's last units: they are for what waits on a person


def fold_at(limits: Limits) -> int:
    """Messages of routine backlog above which a chat folds."""
    return max(1, math.floor(limits.per_minute * FOLD_HORIZON / 60.0))


def unfold_at(limits: Limits) -> int:
    """Routine events a minute at or below which a folding chat unfolds."""
    return limits.per_minute // UNFOLD_SHARE


@dataclass
class Flood:
    """One chat's folding: on when its backlog outgrows the budget, off once a minute's arrivals are few."""

    folding: bool = False
    arrivals: deque[float] = field(default_factory=deque)  # when each routine event was folded

    def arrived(self, now: float) -> None:
        self.arrivals.append(now)

    def calm(self, now: float, limits: Limits) -> bool:
        """Whether the routine events of the last window are few enough to send one by one again."""
        while self.arrivals and self.arrivals[0] <= now - limits.window:
            self.arrivals.popleft()
        return len(self.arrivals) <= unfold_at(limits)


@dataclass
class Digest:
    """One topic's digest message: its subjects' latest status, the events it folds, and the folded
    events not yet shown in it (their tokens are confirmed once Telegram accepted the digest)."""

    latest: dict[tuple[str, str], str] = field(default_factory=dict)
    events: int = 0
    pending: list[tuple[int, Outgoing]] = field(default_factory=list)
    message_id: int | None = None
    changed_at: float = -math.inf
    buried: bool = False  # a message went below it: its next change is a new digest at the bottom

    def add(self, seq: int, item: Outgoing) -> None:
        self._count(item)
        self.pending.append((seq, item))

    def _count(self, item: Outgoing) -> None:
        if item.fold is not None:
            self.latest[(item.fold.noun, item.fold.subject)] = item.fold.status
        self.events += max(1, len(item.tokens))

    def text(self) -> str:
        return render_digest(self.latest, self.events)

    def new_message(self) -> bool:
        return self.message_id is None or self.buried

    def restart(self) -> None:
        """A new digest message: it counts only what the old one did not show."""
        self.latest, self.events, self.message_id, self.buried = {}, 0, None, False
        for _seq, item in self.pending:
            self._count(item)


def routine(item: Outgoing) -> bool:
    """Whether `item` may be folded: an event rendering with a fold note that waits on nobody and goes
    in a plain message (no buttons, anchor, edit or document)."""
    return (
        item.fold is not None
        and not item.urgent
        and item.mergeable
        and item.edit is None
        and not item.buttons
        and item.anchor is None
        and item.document is None
    )


class Folder:
    """The outbox's folding: each chat's flood state, each topic's digest, and the routine backlog
    (in messages, as merging would pack it) that decides when a chat folds."""

    def __init__(self, limits: Limits, message_limit: int) -> None:
        self.limits = limits
        self.message_limit = message_limit
        self.every = DIGEST_EVERY / limits.time_scale
        self.floods: dict[int, Flood] = {}
        self.digests: dict[TopicKey, Digest] = {}
        self._load: dict[TopicKey, int] = {}  # characters of routine text queued per topic
        self._backlog: dict[int, int] = {}  # messages they need per chat
        self.folded = 0  # routine items folded into digests since the start

    def folding(self, chat: int) -> bool:
        flood = self.floods.get(chat)
        return flood is not None and flood.folding

    def backlog(self, chat: int) -> int:
        return self._backlog.get(chat, 0)

    def pending(self) -> int:
        return sum(len(d.pending) for d in self.digests.values())

    # --- routine items in the queues ---------------------------------------------------------------

    def queued(self, key: TopicKey, item: Outgoing, sign: int = 1) -> None:
        """A routine item went into (sign 1) or out of (-1) topic `key`'s queue."""
        if not routine(item):
            return
        before = self._load.get(key, 0)
        after = before + sign * max(1, telegram_length(item.text))
        self._load[key] = after
        if after <= 0:
            del self._load[key]
        change = math.ceil(after / self.message_limit) - math.ceil(before / self.message_limit)
        self._backlog[key[0]] = self._backlog.get(key[0], 0) + change

    def overflowing(self, chat: int) -> bool:
        return self.backlog(chat) > fold_at(self.limits)

    # --- folding in and out --------------------------------------------------------------------------

    def fold(self, key: TopicKey, seq: int, item: Outgoing, now: float) -> bool:
        """Into topic `key`'s digest, if its chat folds and `item` is routine."""
        flood = self.floods.get(key[0])
        if flood is None or not flood.folding or not routine(item):
            return False
        flood.arrived(now)
        self.folded += 1
        self.digests.setdefault(key, Digest()).add(seq, item)
        return True

    def start(self, chat: int, queues: dict[TopicKey, deque[tuple[int, Outgoing]]], now: float) -> None:
        """Chat `chat` folds: the routine items its queues hold go into their topics' digests."""
        self.floods.setdefault(chat, Flood()).folding = True
        for key in [k for k in queues if k[0] == chat]:
            kept: deque[tuple[int, Outgoing]] = deque()
            for seq, item in queues[key]:
                if self.fold(key, seq, item, now):
                    self.queued(key, item, -1)
                else:
                    kept.append((seq, item))
            if kept:
                queues[key] = kept
            else:
                del queues[key]

    def review(self, now: float) -> None:
        """Folding chats whose routine flow is calm unfold; digests with nothing left to show end."""
        for flood in self.floods.values():
            if flood.folding and flood.calm(now, self.limits):
                flood.folding = False
        for key in [k for k, d in self.digests.items() if not d.pending and not self.folding(k[0])]:
            del self.digests[key]

    # --- the digests' messages -----------------------------------------------------------------------

    def heads(self, pacer: Callable[[int], Pacer], now: float) -> list[tuple[int, TopicKey]]:
        """Of each chat's digests with something to show, the one to consider now (seq, topic): the
        oldest that may change now, else the soonest; one pacer question per chat, not per topic."""
        best: dict[int, tuple[bool, float, int, TopicKey]] = {}
        paces: dict[int, float] = {}
        for key, digest in self.digests.items():
            if not digest.pending:
                continue
            chat = key[0]
            if chat not in paces:
                paces[chat] = pacer(chat).wait(now, DIGEST_RESERVE)
            wait = self._after(digest, paces[chat], now)
            seq = digest.pending[0][0]
            rank = (wait > 0, wait if wait > 0 else 0.0, seq, key)
            if chat not in best or rank < best[chat]:
                best[chat] = rank
        return [(seq, key) for _later, _wait, seq, key in best.values()]

    def _after(self, digest: Digest, pace: float, now: float) -> float:
        if digest.new_message():
            return pace
        return max(pace, digest.changed_at + self.every - now)

    def wait(self, key: TopicKey, pacer: Pacer, now: float) -> float:
        """Seconds before topic `key`'s digest may change: a new one as the pacer allows, an edit at most
        once every `every`; both leaving the minute's last DIGEST_RESERVE units."""
        return self._after(self.digests[key], pacer.wait(now, DIGEST_RESERVE), now)

    def take(self, key: TopicKey) -> tuple[str, int | None, tuple[tuple[int, Outgoing], ...]]:
        """The digest's text, the message to edit (None: a new one) and the folded items it now shows."""
        digest = self.digests[key]
        if digest.buried:
            digest.restart()
        entries = tuple(digest.pending)
        digest.pending.clear()
        return digest.text(), digest.message_id, entries

    def shown(self, key: TopicKey, now: float, edit: int | None, message_id: int | None) -> None:
        """Telegram accepted a digest batch."""
        digest = self.digests.get(key)
        if digest is None:
            return
        if edit is None:
            digest.message_id = message_id
        digest.changed_at = now
        if not digest.pending and not self.folding(key[0]):
            del self.digests[key]

    def below(self, key: TopicKey) -> None:
        """Another message went to topic `key`: its digest, if shown, is no longer at the bottom."""
        digest = self.digests.get(key)
        if digest is not None and digest.message_id is not None:
            digest.buried = True

    def put_back(self, key: TopicKey, entries: tuple[tuple[int, Outgoing], ...], gone: bool = False) -> None:
        """A digest batch Telegram did not accept: its items wait again (`gone`: in a new message)."""
        digest = self.digests.setdefault(key, Digest())
        digest.pending[0:0] = entries
        if gone:
            digest.message_id = None

    def move(self, chat: int, old: int | None, new: int | None) -> None:
        digest = self.digests.pop((chat, old), None)
        if digest is None:
            return
        target = self.digests.setdefault((chat, new), Digest())
        for seq, item in digest.pending:
            target.add(seq, item)
