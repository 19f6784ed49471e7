"""The outbound queue: what waits to be shown in each topic, merged into few messages, paced per chat.

Pure: times are passed in (seconds on one monotonic clock). `bot.delivery.sender` sends what `take` hands out
and reports back with `sent`, `put_back` or `hold`; nothing here talks to Telegram. Every message and
every edit spends one unit of the group's minute budget, which several bot processes share through
Redis (`bot.delivery.budget`): `heard` tells a chat's pacer what the others spent. When the budget
cannot keep up, routine events fold into one digest per topic (`bot.delivery.folding`).
"""

from __future__ import annotations

import itertools
import math
from collections import deque
from dataclasses import dataclass, field, replace
from typing import NamedTuple

from bot.delivery.folding import DIGEST_RESERVE, Folder
from bot.delivery.outgoing import Document, Outgoing
from bot.delivery.pacing import Limits, Pacer
from bot.delivery.status_lines import STATUS_EVERY, STATUS_RESERVE, StatusLine, StatusStep
from bot.render.render import Button
from bot.render.split import MESSAGE_LIMIT, OutputBuffer, split_message, telegram_length

__all__ = ["Batch", "Document", "Limits", "Outbox", "Outgoing", "Pacer", "TopicKey"]

TopicKey = tuple[int, int | None]  # (chat, message_thread_id); None is the General topic
JOINER = "\n"
OUTPUT_EDIT_EVERY = 10.0  # Telegram seconds between two edits of a topic's output message (more piles up)
OUTPUT_RESERVE = 4  # agents' output never spends the minute's last units: they are for events


@dataclass(frozen=True)
class _Part:
    """A piece of an agent's streaming output, at most one message long."""

    seq: int
    text: str
    tokens: tuple[str, ...]
    turn: bool = False  # a new turn of the agent starts here: its output goes in a new message


@dataclass(frozen=True)
class Batch:
    """What to do now: send a new message, or (for streaming output) edit message `edit` to `text`."""

    chat: int
    thread: int | None
    text: str
    buttons: tuple[tuple[Button, ...], ...] = ()
    tokens: tuple[str, ...] = ()
    anchor: str | None = None
    reply_to: int | None = None
    document: Document | None = None
    edit: int | None = None
    entries: tuple[tuple[int, Outgoing], ...] = ()  # the messages merged into it, to put back on failure
    parts: tuple[_Part, ...] = ()  # the streaming output it shows, to put back on failure
    buffer: OutputBuffer | None = None  # the streaming message after this batch
    continues: int | None = None  # the streaming message this batch goes on from (None: a new one)
    status: StatusStep | None = None  # a change of the topic's status line
    delete: int | None = None  # a status message to delete
    ahead: bool = False  # output that goes ahead of a message queued after it: it spends as that would
    digest: bool = False  # the topic's digest of folded events (their items in `entries`)

    @property
    def key(self) -> TopicKey:
        return (self.chat, self.thread)

    @property
    def streaming(self) -> bool:
        return self.buffer is not None

    @property
    def empty(self) -> bool:
        """Streaming items with nothing to show (only tokens to confirm): no call to Telegram."""
        return self.streaming and not any(part.text for part in self.parts)

    @property
    def reserve(self) -> int:
        """Units of the minute's budget this batch must leave unspent: output and status changes leave
        the events' share."""
        if self.status is not None:
            return STATUS_RESERVE
        if self.digest:
            return DIGEST_RESERVE
        return OUTPUT_RESERVE if self.streaming and not self.ahead else 0

    @property
    def counted(self) -> bool:
        """Whether it spends from the minute's budget: every message and edit; not a deletion."""
        return not self.empty and self.delete is None


class _Head(NamedTuple):
    """The first thing waiting in one queue: messages, or streaming output."""

    urgent: bool
    seq: int
    key: TopicKey
    kind: str  # messages | stream | status | digest


@dataclass
class _Stream:
    """The streaming-output message of one topic: what it shows, its id, and what waits to be added."""

    buffer: OutputBuffer = field(default_factory=OutputBuffer)
    message_id: int | None = None
    pending: deque[_Part] = field(default_factory=deque)
    changed_at: float = -math.inf  # when its message was last sent or edited


class Outbox:
    """Per-topic queues of messages and streaming output, handed out oldest first within the limits."""

    def __init__(self, limits: Limits, message_limit: int = MESSAGE_LIMIT) -> None:
        self.limits = limits
        self.message_limit = message_limit
        self._queues: dict[TopicKey, deque[tuple[int, Outgoing]]] = {}
        self._streams: dict[TopicKey, _Stream] = {}
        self._pacers: dict[int, Pacer] = {}
        self._status: dict[TopicKey, StatusLine] = {}
        self.status_every = STATUS_EVERY / limits.time_scale
        self.output_every = OUTPUT_EDIT_EVERY / limits.time_scale
        self._seq = itertools.count()
        self.folder = Folder(limits, message_limit)

    # --- putting in ----------------------------------------------------------------------------------

    def put(self, item: Outgoing, now: float = 0.0) -> None:
        """Queue `item` (at `now`); a routine one goes in its topic's digest while its chat folds, and
        the chat folds once its routine backlog outgrows the budget."""
        key, seq = (item.chat, item.thread), next(self._seq)
        if self.folder.fold(key, seq, item, now):
            return
        self._queues.setdefault(key, deque()).append((seq, item))
        self.folder.queued(key, item)
        if self.folder.overflowing(item.chat):
            self.folder.start(item.chat, self._queues, now)

    def folding(self, chat: int) -> bool:
        """Whether routine events for `chat` are folded into digests now."""
        return self.folder.folding(chat)

    def put_output(self, chat: int, thread: int | None, text: str, tokens: tuple[str, ...] = ()) -> None:
        """A streaming item (Telegram HTML), appended to the topic's streaming message when it fits."""
        stream = self._streams.setdefault((chat, thread), _Stream())
        limit = stream.buffer.soft_limit
        pieces = split_message(text, limit) if text.strip() else []
        if not pieces:
            if tokens:  # nothing to show, but its tokens still want confirming
                stream.pending.append(_Part(next(self._seq), "", tokens))
            return
        for i, piece in enumerate(pieces):
            last = i == len(pieces) - 1
            stream.pending.append(_Part(next(self._seq), piece, tokens if last else ()))

    def new_turn(self, chat: int, thread: int | None, tokens: tuple[str, ...] = ()) -> None:
        """The agent started a new turn: output queued from here on starts a new message."""
        stream = self._streams.setdefault((chat, thread), _Stream())
        stream.pending.append(_Part(next(self._seq), "", tokens, turn=True))

    def set_status(self, chat: int, thread: int | None, text: str) -> None:
        """The topic's status line should read `text` ("" : none); the latest text always wins."""
        line = self._status.get((chat, thread))
        if line is None:
            if not text:
                return
            line = self._status[(chat, thread)] = StatusLine()
        line.wanted = text

    def adopt_status(self, chat: int, thread: int | None, message_id: int) -> None:
        """A status message an earlier bot left in the topic: changed in place, or deleted if not wanted."""
        self._status.setdefault((chat, thread), StatusLine()).message_id = message_id

    def __len__(self) -> int:
        """Messages and streaming items waiting."""
        streams = sum(len(s.pending) for s in self._streams.values())
        return sum(len(q) for q in self._queues.values()) + streams + self.folder.pending()

    # --- handing out -------------------------------------------------------------------------------------

    def pacer(self, chat: int) -> Pacer:
        pacer = self._pacers.get(chat)
        if pacer is None:
            pacer = self._pacers[chat] = Pacer(self.limits)
        return pacer

    def _heads(self, now: float) -> list[_Head]:
        """The first waiting thing of every queue; a status change only where nothing else may go now."""
        heads = []
        for key, queue in self._queues.items():
            if queue:
                seq, item = queue[0]
                heads.append(_Head(item.urgent, seq, key, "messages"))
        for key, stream in self._streams.items():
            if stream.pending:
                heads.append(_Head(False, stream.pending[0].seq, key, "stream"))
        heads.extend(_Head(False, seq, key, "digest") for seq, key in self.folder.heads(self.pacer, now))
        busy = {h.key[0] for h in heads if self._wait(h, now) <= 0}
        for key, line in self._status.items():
            if _removal(line):  # before anything else: the line never shows beside what replaces it
                heads.append(_Head(True, -1, key, "status"))
            elif key[0] not in busy and line.step() is not None:
                heads.append(_Head(False, 1 << 62, key, "status"))
        return heads

    def _wait(self, head: _Head, now: float) -> float:
        """Seconds before `head` may go: streaming items with nothing to show go at once; a status
        change goes at most once every `status_every`, with a spare token, leaving the events' reserve."""
        if head.kind == "stream":
            return self._wait_stream(head.key, now)
        if head.kind == "status":
            line = self._status[head.key]
            if _removal(line):
                return self.pacer(head.key[0]).held(now)  # a deletion spends nothing of the minute
            pace = self.pacer(head.key[0]).wait(now, STATUS_RESERVE, spare=True)
            due = line.due(now, self.status_every)
            return max(pace, 0.0 if due else line.changed_at + self.status_every - now)
        if head.kind == "digest":
            return self.folder.wait(head.key, self.pacer(head.key[0]), now)
        return self.pacer(head.key[0]).wait(now)

    def _wait_stream(self, key: TopicKey, now: float) -> float:
        stream = self._streams[key]
        if not any(p.text for p in stream.pending):
            return 0.0
        pace = self.pacer(key[0]).wait(now, OUTPUT_RESERVE)
        if _starts_new_message(stream):
            return pace  # a new message goes at once; edits wait their interval, and more piles up
        return max(pace, stream.changed_at + self.output_every - now)

    def wait(self, now: float) -> float | None:
        """Seconds until `take` has something (0: now), None when nothing waits."""
        self.folder.review(now)
        heads = self._heads(now)
        if not heads:
            return None
        return min(self._wait(h, now) for h in heads)

    def take(self, now: float) -> Batch | None:
        """The next batch the limits allow now (urgent first, then oldest), taken off the queues."""
        self.folder.review(now)
        ready = [h for h in self._heads(now) if self._wait(h, now) <= 0]
        if not ready:
            return None
        head = min(ready, key=lambda h: (not h.urgent, h.seq))
        if head.kind == "messages" and self._output_before(head):
            return self._take_stream(head.key, before=head.seq)  # output written before the message
        if head.kind == "stream":
            return self._take_stream(head.key)
        if head.kind == "status":
            return self._take_status(head.key)
        if head.kind == "digest":
            text, edit, entries = self.folder.take(head.key)
            tokens = tuple(t for _seq, item in entries for t in item.tokens)
            return Batch(
                head.key[0], head.key[1], text, tokens=tokens, edit=edit, entries=entries, digest=True
            )
        return self._take_messages(head.key)

    def _output_before(self, head: _Head) -> bool:
        """Whether output queued before this message waits in its topic: it goes first, so what an
        agent wrote stays above what was said after it (its turn's end, a question)."""
        stream = self._streams.get(head.key)
        return stream is not None and any(p.text and p.seq < head.seq for p in stream.pending)

    def _take_status(self, key: TopicKey) -> Batch:
        step = self._status[key].step()
        assert step is not None
        return Batch(key[0], key[1], step.text, edit=step.edit, status=step, delete=step.delete)

    def _take_messages(self, key: TopicKey) -> Batch:
        """Merge what waits for a topic into one message."""
        queue = self._queues[key]
        entries = [queue.popleft()]
        first = entries[0][1]
        text = first.text
        closed = (
            bool(first.buttons) or first.anchor is not None or not first.mergeable or first.edit is not None
        )
        while queue and not closed:
            nxt = queue[0][1]
            joined = text + JOINER + nxt.text
            too_long = telegram_length(joined) > self.message_limit
            if not nxt.mergeable or nxt.edit is not None or nxt.urgent != first.urgent or too_long:
                break
            entries.append(queue.popleft())
            text = joined
            closed = bool(nxt.buttons) or nxt.anchor is not None
        if not queue:
            del self._queues[key]
        for _seq, item in entries:
            self.folder.queued(key, item, -1)
        last = entries[-1][1]
        return Batch(
            chat=key[0],
            thread=key[1],
            text=text,
            buttons=last.buttons,
            tokens=tuple(t for _seq, item in entries for t in item.tokens),
            anchor=last.anchor,
            reply_to=first.reply_to,
            document=first.document,
            edit=first.edit,
            entries=tuple(entries),
        )

    def _take_stream(self, key: TopicKey, before: int | None = None) -> Batch:
        """The output one send or one edit shows: a new message, or items appended to the current one;
        only items queued before `before` (a message's place in the queue), when given.

        A new turn starts a new message; a batch never holds the output of two turns.
        """
        stream = self._streams[key]
        buffer, message_id = stream.buffer, stream.message_id
        new_message: bool | None = None  # undecided until the first item with text
        taken: list[_Part] = []
        while stream.pending and (before is None or stream.pending[0].seq < before):
            part = stream.pending[0]
            if part.turn:
                if new_message is not None:
                    break
                buffer, message_id = OutputBuffer(soft_limit=buffer.soft_limit), None
            else:
                after, steps = buffer.add(part.text)
                if steps:
                    starts_new = not steps[0].edit or message_id is None
                    if new_message is None:
                        new_message = starts_new
                    elif starts_new:
                        break
                buffer = after
            stream.pending.popleft()
            taken.append(part)
        return Batch(
            chat=key[0],
            thread=key[1],
            text=buffer.text,
            tokens=tuple(t for part in taken for t in part.tokens),
            edit=message_id if new_message is False else None,
            parts=tuple(taken),
            buffer=buffer,
            continues=message_id,
            ahead=before is not None,
        )

    # --- hearing back ----------------------------------------------------------------------------------

    def sent(self, batch: Batch, now: float, message_id: int | None) -> None:
        """Telegram accepted `batch` (an empty streaming batch was never sent, and costs nothing).

        A new message below a topic's streaming message ends it: output after it starts a new one at
        the bottom, so edits only ever touch the newest output message.
        """
        if not batch.empty:
            self.pacer(batch.chat).record(now, batch.status is not None, batch.counted)
        if batch.status is not None:
            self._status.setdefault(batch.key, StatusLine()).done(batch.status, now, message_id)
            return
        if batch.edit is None and not batch.empty and (line := self._status.get(batch.key)) is not None:
            line.buried = line.message_id is not None
        if batch.digest:
            self.folder.shown(batch.key, now, batch.edit, message_id)
        elif batch.edit is None and not batch.empty:
            self.folder.below(batch.key)
        if batch.buffer is not None:
            stream = self._streams.setdefault(batch.key, _Stream())
            stream.buffer = batch.buffer
            if batch.empty:
                stream.message_id = batch.continues
                return
            stream.changed_at = now
            if batch.edit is None:
                stream.message_id = message_id
        elif batch.edit is None:
            self.restart_stream(batch.chat, batch.thread)

    def status_failed(self, batch: Batch, now: float, gone: bool) -> None:
        """Telegram refused a status change (`gone`: the message is not there any more)."""
        if batch.status is not None:
            self._status.setdefault(batch.key, StatusLine()).failed(batch.status, now, gone)

    def put_back(self, batch: Batch) -> None:
        """A batch that was not shown goes back to the front of its topic's queue, in its order."""
        if batch.status is not None:
            return  # the status line is recomputed from what is wanted, latest first
        if batch.digest:
            self.folder.put_back(batch.key, batch.entries)
            return
        if batch.streaming:
            stream = self._streams.setdefault(batch.key, _Stream())
            stream.pending.extendleft(reversed(batch.parts))
            return
        queue = self._queues.setdefault(batch.key, deque())
        queue.extendleft(reversed(batch.entries))
        for _seq, item in batch.entries:
            self.folder.queued(batch.key, item)

    def put_back_new(self, batch: Batch) -> None:
        """An edit whose message is gone goes back as a new message."""
        if batch.digest:
            self.folder.put_back(batch.key, batch.entries, gone=True)
            return
        entries = tuple((seq, replace(item, edit=None)) for seq, item in batch.entries)
        self.put_back(replace(batch, entries=entries, edit=None))

    def restart_stream(self, chat: int, thread: int | None) -> None:
        """The streaming message is gone (deleted, never known, or no longer the topic's newest
        message): the next output starts a new one."""
        stream = self._streams.get((chat, thread))
        if stream is not None:
            stream.buffer = OutputBuffer(soft_limit=stream.buffer.soft_limit)
            stream.message_id = None

    def hold(self, chat: int, until: float) -> None:
        self.pacer(chat).hold(until)

    def move(self, chat: int, old: int | None, new: int | None) -> None:
        """Everything waiting for topic `old` goes to topic `new` (a topic re-created, or given up)."""
        if old == new:
            return
        self.folder.move(chat, old, new)
        queue = self._queues.pop((chat, old), None)
        if queue:
            for _seq, item in queue:
                self.folder.queued((chat, old), item, -1)
                self.folder.queued((chat, new), item)
            moved = [(seq, replace(item, thread=new)) for seq, item in queue]
            merged = sorted([*self._queues.get((chat, new), ()), *moved], key=lambda entry: entry[0])
            self._queues[(chat, new)] = deque(merged)
        stream = self._streams.pop((chat, old), None)
        if stream is not None and stream.pending:
            target = self._streams.setdefault((chat, new), _Stream())
            target.pending = deque(sorted([*target.pending, *stream.pending], key=lambda part: part.seq))


def _removal(line: StatusLine) -> bool:
    """Whether the line's next step deletes it for good (its agent's turn is over)."""
    step = line.step()
    return step is not None and step.delete is not None and not line.wanted


def _starts_new_message(stream: _Stream) -> bool:
    """Whether the stream's next batch is a new message rather than an edit of its current one."""
    if stream.message_id is None:
        return True
    for part in stream.pending:
        if part.turn:
            return True
        if part.text:
            _after, steps = stream.buffer.add(part.text)
            return bool(steps) and not steps[0].edit
    return False
