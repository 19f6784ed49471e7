"""The bot's reader of the events stream: route each event, create the topics it asks for, queue what
shows it, and acknowledge it only once Telegram accepted every message that shows it.

Consumer group `telegram` (XREADGROUP BLOCK). Each (event, topic role) shown is recorded in Redis after
Telegram accepted it, before the XACK; after a crash the unacknowledged events are read again and
whatever was recorded as shown is not shown twice. What waits on a person goes first (`urgent`); a
routine event carries how it reads in a digest, for when the chat's budget cannot keep up and its
topic's events are folded (bot.delivery.folding): it is acknowledged once its digest was accepted.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import redis.asyncio as aredis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError, ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError
from telegram.error import BadRequest, Forbidden, RetryAfter, TelegramError

from bot.delivery.forum import Forum, retry_seconds
from bot.delivery.outbound import Batch, Outgoing
from bot.delivery.sender import Sender
from bot.delivery.teardown_note import TeardownNotes
from bot.feeds.dialog_memory import DialogMemory
from bot.feeds.dialog_messages import Dialog, DialogMessages, Edit, Wait
from bot.feeds.last_words import LastWords, Release
from bot.render.digest_render import fold_of, waits_on_person
from bot.render.plan_render import ANCHOR_PREFIX
from bot.render.render import SAYS_LAST_MESSAGE, Style, escape, render
from bot.render.review_render import ANCHOR_PREFIX as REVIEW_ANCHOR
from bot.render.split import split_message
from bot.render.streaming import output_item
from bot.topics.routing import Bindings, Delivery, TopicKind, route
from bot.topics.topics import TopicInfo, TopicRegistry
from bus.connection.reconnect import Outage, forget_idle
from bus.events.activity import TURN_END
from bus.events.event_model import Event
from bus.events.streams import Entry, entries_of
from bus.readers.dead_letters import Poison, dead_letter_async, read_entry
from bus.wire.keys import Keys

log = logging.getLogger(__name__)

GROUP = "telegram"
SEEN_SCOPE = "telegram"
SEEN_TTL = 7 * 24 * 3600
QUESTIONS = "question"  # topic:question — message id of a question shown → question id
BLOCK_MS = 5000
READ_COUNT = 500
TOKEN_PREFIX = "e"
MAX_CREATE_TRIES = 5
DRAWN = ("options", "default", "question_id", "title")  # what a dialog's first telling read off the screen


@dataclass(frozen=True)
class _Show:
    """One event in one topic: `role` names the topic for the record of what was shown."""

    entry_id: str
    event: Event
    role: str
    thread: int | None
    style: Style

    @property
    def token(self) -> str:
        return f"{TOKEN_PREFIX}|{self.entry_id}|{self.role}"


class EventConsumer:
    def __init__(
        self,
        client: aredis.Redis,
        keys: Keys,
        registry: TopicRegistry,
        forum: Forum,
        sender: Sender,
        consumer: str,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.client = client
        self.keys = keys
        self.registry = registry
        self.forum = forum
        self.sender = sender
        self.consumer = consumer
        self.pending: dict[str, set[str]] = {}  # entry id → topic roles not yet accepted by Telegram
        # shown, but Redis failed to record it (a dead connection just after a restart): kept until it is
        # recorded, so reading the entry again (the group still holds it) does not show it twice
        self.unrecorded = Unrecorded()
        # accepted by Telegram, no longer pending, its record in Redis under way: read again meanwhile (the
        # recovery after a restart), it is shown already
        self.recording: set[str] = set()  # "<entry id>:<role>"
        self.observers: list[Callable[[Event], None]] = []  # told of every event read (the status board)
        self.clock = clock
        self.last_words: LastWords[_Show] = LastWords()  # turn ends waiting for their last words
        self._timer: asyncio.TimerHandle | None = None
        self.dialogs: DialogMessages[_Show] = DialogMessages()  # one message per dialog and topic
        self.dialog_memory = DialogMemory(client, keys)  # ... kept across restarts
        self.notes: TeardownNotes | None = None  # an agent's teardown events fold into its Kill's answer
        self.outage = Outage("events")

    async def prepare(self) -> None:
        """The group exists from here on: events published after this are shown (a new group starts now)."""
        try:
            await self.client.xgroup_create(self.keys.events, GROUP, id="$", mkstream=True)
        except ResponseError as e:
            if "BUSYGROUP" not in str(e):
                raise

    async def run(self) -> None:
        await self.prepare()
        recover, more = True, False
        while True:
            try:
                if self.unrecorded:  # before the entries are read again: recorded, they are not
                    await self._record(*self.unrecorded.take())
                if recover:
                    await self._recover()
                    recover = False
                    if said := self.outage.back():
                        log.warning("%s", said)
                reply = await self.client.xreadgroup(
                    GROUP,
                    self.consumer,
                    {self.keys.events: ">"},
                    count=READ_COUNT,
                    block=None if more else BLOCK_MS,
                )
                entries = entries_of(reply)
                # Read on at once until a read finds nothing: what arrives together is queued together
                # and merges, rather than a first message going out alone and its followers waiting.
                more = bool(entries)
                self.sender.loading(more)
                await self._handle(entries)
            except (RedisConnectionError, RedisTimeoutError) as e:
                if said := self.outage.lost(e):
                    log.warning("%s", said)
                    await forget_idle(self.client)
                self.sender.loading(False)
                await asyncio.sleep(self.outage.pause)
                recover = True  # what was read and not yet queued is pending in the group
            except ResponseError as e:
                if "NOGROUP" not in str(e):
                    raise
                log.warning("events: the consumer group was gone (stream deleted?); making it again")
                await self.prepare()

    async def _recover(self) -> None:
        self.sender.loading(True)
        try:
            await self._handle(await self._unacknowledged())
        finally:
            self.sender.loading(False)

    async def _unacknowledged(self) -> list[Entry]:
        """What the group read before and never acknowledged, whichever bot process read it."""
        taken: list[Entry] = []
        cursor = "0-0"
        while True:
            reply: Any = await self.client.xautoclaim(
                self.keys.events, GROUP, self.consumer, min_idle_time=0, start_id=cursor, count=READ_COUNT
            )
            cursor, entries = str(reply[0]), reply[1]
            taken.extend((str(i), f) for i, f in entries if f is not None)
            if cursor == "0-0" or not entries:
                break
        if taken:
            log.info("events: %d unacknowledged from before, shown unless shown already", len(taken))
        return taken

    # --- one batch of events ----------------------------------------------------------------------------

    async def _handle(self, entries: list[Entry]) -> None:
        # in flight already, or shown with its acknowledgement still to be made
        entries = [(i, f) for i, f in entries if i not in self.pending and i not in self.unrecorded.finished]
        if not entries:
            return
        try:
            await self._show(entries)
        finally:
            self.registry.opened()  # the topics made for these events: their agents' output goes below

    async def _show(self, entries: list[Entry]) -> None:
        shows: list[_Show] = []
        for entry_id, fields in entries:
            found = read_entry(self.keys.events, entry_id, fields)
            if isinstance(found, Poison):  # nothing to show: to the dead letters, acknowledged below
                if await dead_letter_async(self.client, self.keys, found):
                    log.warning(
                        "events: entry %s is unreadable (%s); copied to the dead letters",
                        entry_id,
                        found.reason,
                    )
                continue
            event = Event.from_envelope(found)
            shows.extend(await self._plan(entry_id, event))
            for observe in self.observers:
                observe(event)
        shown = await self._already_shown(shows)
        await self._recall_dialogs([show for show, done in zip(shows, shown, strict=True) if not done])
        waiting: dict[str, set[str]] = {entry_id: set() for entry_id, _fields in entries}
        folded: list[str] = []
        for show, done in zip(shows, shown, strict=True):
            if done:
                continue
            if await self._fold(show):
                folded.append(f"{show.entry_id}:{show.role}")
                continue
            waiting[show.entry_id].add(show.role)
            self._hold(show)
        finished = [entry_id for entry_id, roles in waiting.items() if not roles]
        self.pending.update({entry_id: roles for entry_id, roles in waiting.items() if roles})
        await self._record(folded, finished)

    async def _fold(self, show: _Show) -> bool:
        """Shown in the note of the agent's teardown, rather than as a message of its own."""
        if self.notes is None or show.role != "data":
            return False
        return await self.notes.fold(show.event, show.thread, render(show.event, show.style).text)

    async def _plan(self, entry_id: str, event: Event) -> list[_Show]:
        """Where `event` shows, topics created as needed; one entry per topic."""
        bindings = self.registry.bindings()
        plan: list[_Show] = []
        for delivery in route(event, bindings):
            role = _role(event, delivery, bindings)
            thread = delivery.thread_id
            if delivery.create is not None:
                thread = await self._create(event, delivery)
            if any(p.thread == thread for p in plan):
                continue  # a topic that could not be created fell back to one already showing it
            plan.append(_Show(entry_id, event, role, thread, delivery.style))
            if role == "data" and thread is not None:
                await self._adopt_agent(event, thread)
        return plan

    async def _create(self, event: Event, delivery: Delivery) -> int | None:
        """The topic routing asked for, created and bound; the project topic (or General) if that fails."""
        request = delivery.create
        assert request is not None
        for attempt in range(1, MAX_CREATE_TRIES + 1):
            try:
                thread = await self.forum.create_topic(request.name)
            except RetryAfter as e:
                await asyncio.sleep(self.sender.outbox.limits.local_seconds(retry_seconds(e)))
                continue
            except TelegramError as e:
                log.warning("could not create topic %r (%s, try %d)", request.name, e, attempt)
                if attempt < MAX_CREATE_TRIES and not isinstance(e, BadRequest | Forbidden):
                    await asyncio.sleep(attempt)
                    continue
                break
            info = TopicInfo(request.name, event.project or "")
            # opening: the agent's output waits until this event is queued in the topic (read in between,
            # under load, the agent's first output showed above "→ agent spawned")
            await self.registry.bind(request.kind.value, request.key, thread, info, opening=True)
            log.info("created topic %s %r for %s %s", thread, request.name, request.kind.value, request.key)
            return thread
        return self.registry.thread_of("project", event.project) if event.project else None

    async def _adopt_agent(self, event: Event, thread: int) -> None:
        """An agent working in a task's topic gets that topic too (its output and what people type)."""
        if not event.agent or not event.task or self.registry.thread_of("agent", event.agent) is not None:
            return
        if ("task", event.task) in self.registry.bound_to(thread):
            await self.registry.bind("agent", event.agent, thread, opening=True)

    async def _already_shown(self, shows: list[_Show]) -> list[bool]:
        if not shows:
            return []
        idents = [f"{show.entry_id}:{show.role}" for show in shows]
        # before the read: one whose record ends during it is in Redis by then, or still in `recording`
        in_hand = [i in self.recording or i in self.unrecorded.shown for i in idents]
        pipe = self.client.pipeline(transaction=False)
        for ident in idents:
            pipe.exists(self.keys.seen(SEEN_SCOPE, ident))
        found = await pipe.execute()
        return [
            held or bool(n) or i in self.unrecorded.shown
            for i, held, n in zip(idents, in_hand, found, strict=True)
        ]

    async def _recall_dialogs(self, shows: list[_Show]) -> None:
        """The messages an earlier bot process showed these dialogs in, so they are edited, not told again."""
        dialogs = ((_dialog(show), show) for show in shows)
        unknown = {dialog: show for dialog, show in dialogs if dialog and not self.dialogs.knows(dialog)}
        for dialog, (message_id, first) in (await self.dialog_memory.recall(unknown)).items():
            self.dialogs.remember(dialog, message_id, replace(unknown[dialog], event=first))
            log.info("dialog %s in topic %s: shown before as message %s", dialog[1], dialog[0], message_id)

    def _hold(self, show: _Show) -> None:
        """Queue `show`; one that ends a turn in the agent's own topic waits for the turn's last words: the
        transcript's, or the Stop hook's copy once the worker's tail went through the turn without them
        (bot.feeds.last_words)."""
        agent = show.event.agent or ""
        own = show.thread is not None and show.thread == self.registry.thread_of("agent", agent)
        words = str(show.event.data.get("last_message") or "") if own else ""
        event, now = show.event, self.clock()
        self._release(self.last_words.hold(show.thread, show, agent, words, show.entry_id, event.ts, now))
        self._arm()

    def repeats(self, agent: str, fields: dict[str, str]) -> bool:
        """Whether an output item of `agent` repeats last words already shown from a turn's end: the
        output feed does not show it again."""
        kind, text, ts = fields.get("kind", ""), fields.get("text", ""), fields.get("ts", "")
        return self.last_words.repeats(agent, kind, text, ts)

    def output_item(self, agent: str, fields: dict[str, str]) -> None:
        """An item of an agent's output was queued (the output feed tells): a turn end may go now."""
        if fields.get("kind") == "text":
            self._release(self.last_words.said(agent, fields.get("text", "")))
        elif fields.get("kind") == TURN_END:
            self._release(self.last_words.through(agent, fields.get("event", "")))

    def _release(self, released: list[Release[_Show]]) -> None:
        for ready in released:
            if ready.words and ready.item.event.type not in SAYS_LAST_MESSAGE:
                self.sender.put_output(ready.item.thread, output_item("text", ready.words), ())
            self._queue(ready.item)

    def _arm(self) -> None:
        deadline = self.last_words.next_deadline()
        if deadline is not None and self._timer is None:
            delay = max(0.0, deadline - self.clock())
            self._timer = asyncio.get_running_loop().call_later(delay, self._overdue)

    def _overdue(self) -> None:
        self._timer = None
        late = self.last_words.due(self.clock())
        if cut := [r.item.entry_id for r in late if r.words]:
            log.info("events %s shown after the hook's copy of the turn's last words", " ".join(cut))
        self._release(late)
        self._arm()

    def _queue(self, show: _Show) -> None:
        edit = None
        if (dialog := _dialog(show)) is not None:
            match self.dialogs.tell(dialog, show.token, show):
                case Wait():
                    return
                case Edit(message_id, first):
                    edit, show = message_id, _told_again(first, show)
        rendered = render(show.event, show.style)
        parts = split_message(rendered.text) or [escape(show.event.type)]
        question = show.event.data.get("question_id") if show.event.type == "question" else None
        if show.event.type == "plan_ready" and show.event.data.get("plan"):
            question = f"{ANCHOR_PREFIX}{show.event.data['plan']}"  # a reply to it is changes for the planner
        anchor = str(question) if question and show.style is Style.FULL else None
        urgent = waits_on_person(show.event.type)
        fold = fold_of(show.event) if len(parts) == 1 and dialog is None else None
        for i, part in enumerate(parts):
            last = i == len(parts) - 1
            self.sender.put(
                Outgoing(
                    self.forum.chat_id,
                    show.thread,
                    part,
                    buttons=rendered.buttons if last else (),
                    tokens=(show.token,) if last else (),
                    anchor=anchor if last else None,
                    edit=edit if len(parts) == 1 else None,
                    mergeable=dialog is None,  # a dialog's message holds it alone: an edit keeps the rest
                    urgent=urgent,
                    fold=fold,
                )
            )

    # --- Telegram accepted ---------------------------------------------------------------------------------

    async def confirm(self, batch: Batch, message_id: int | None) -> None:
        """Record what `batch` showed, then acknowledge the events now shown everywhere they go."""
        shown: list[str] = []
        finished: list[str] = []
        try:
            await self._confirm(batch, message_id, shown, finished)
        finally:
            self.recording.difference_update(shown)

    async def _confirm(
        self, batch: Batch, message_id: int | None, shown: list[str], finished: list[str]
    ) -> None:
        for token in batch.tokens:
            prefix, _, rest = token.partition("|")
            if prefix != TOKEN_PREFIX:
                continue
            entry_id, _, role = rest.partition("|")
            shown.append(f"{entry_id}:{role}")
            roles = self.pending.get(entry_id)
            if roles is not None:
                roles.discard(role)
                if not roles:
                    del self.pending[entry_id]
                    finished.append(entry_id)
        self.recording.update(shown)  # from here until recorded: no longer pending, not yet in Redis
        dialogs = self.dialogs.shown(batch.tokens, message_id)
        for waited in dialogs.ready:
            self._queue(waited)  # now an edit of the dialog's message
        if dialogs.placed and message_id is not None:
            try:
                await self.dialog_memory.keep(((d, first.event) for d, first in dialogs.placed), message_id)
            except RedisError as e:
                log.warning("dialog message %s shown, but a restart will not know it: %s", message_id, e)
        if batch.anchor and not batch.anchor.startswith(REVIEW_ANCHOR) and message_id is not None:
            try:
                await self.client.hset(self.keys.topics(QUESTIONS), str(message_id), batch.anchor)
            except RedisError as e:
                log.warning("question %s shown, but replies to it will not be found: %s", batch.anchor, e)
        await self._record(shown, finished)

    async def _record(self, shown: list[str], finished: list[str]) -> None:
        if not shown and not finished:
            return
        pipe = self.client.pipeline(transaction=False)
        for ident in shown:
            pipe.set(self.keys.seen(SEEN_SCOPE, ident), "1", nx=True, ex=SEEN_TTL)
        if finished:
            pipe.xack(self.keys.events, GROUP, *finished)
        try:
            await pipe.execute()
        except RedisError as e:  # shown: remembered, recorded once Redis is back, never shown again
            log.warning("events %s shown but not acknowledged yet: %s", finished or shown, e)
            self.unrecorded.add(shown, finished)
            return
        if finished:
            log.info("events shown and acknowledged: %s", " ".join(finished))


@dataclass
class Unrecorded:
    """What the bot showed whose record in Redis (the seen marks, the acknowledgement) failed."""

    shown: set[str] = field(default_factory=set)  # "<entry id>:<role>"
    finished: set[str] = field(default_factory=set)  # entry ids to acknowledge

    def __bool__(self) -> bool:
        return bool(self.shown or self.finished)

    def add(self, shown: list[str], finished: list[str]) -> None:
        self.shown.update(shown)
        self.finished.update(finished)

    def take(self) -> tuple[list[str], list[str]]:
        """All of it, to record again (what fails again comes back through `add`)."""
        taken = (sorted(self.shown), sorted(self.finished))
        self.shown, self.finished = set(), set()
        return taken


def _role(event: Event, delivery: Delivery, bindings: Bindings) -> str:
    """Which of the event's topics this is: project, data (task or agent), merge, or general."""
    if delivery.create is not None:
        return "merge" if delivery.create.kind is TopicKind.MERGE else "data"
    thread = delivery.thread_id
    if thread is None:
        return "general"
    if event.project and thread == bindings.projects.get(event.project):
        return "project"
    if thread == bindings.merges.get(event.task or event.agent or ""):
        return "merge"
    return "data"


def _dialog(show: _Show) -> Dialog | None:
    """The dialog a `permission` event (or what a hook adds to it, `dialog_detail`) tells: its topic and
    prompt, told once per topic."""
    telling = show.event.type in ("permission", "dialog_detail")
    prompt = show.event.data.get("prompt_id") if telling else None
    return (show.thread, prompt) if isinstance(prompt, str) and prompt else None


def _told_again(first: _Show, show: _Show) -> _Show:
    """A dialog's second telling: the hook's (a `dialog_detail`, or a `permission` of an older ittybus)
    after the pane's, or the pane's `permission` after the hook's detail. Its fields over the first's,
    but for what the screen showed (the options as drawn, the default, the question they answer, the
    title): a hook tells of a dialog before it is drawn, so its options are only the answers by meaning."""
    pane = show if first.event.type == "dialog_detail" else first
    told = {k: v for k, v in show.event.data.items() if v not in (None, "", [], {})}
    drawn = {k: v for k, v in pane.event.data.items() if k in DRAWN and v not in (None, "", [], {})}
    data = {**first.event.data, **told, **drawn}
    return replace(show, event=show.event.model_copy(update={"type": "permission", "data": data}))
