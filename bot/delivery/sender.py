"""The one task that talks to Telegram for everything the bot shows: it drains the outbox within the
limits and recovers from what Telegram refuses.

Before each call to Telegram (a message or an edit) it spends a unit of the group's minute budget,
shared with every other bot process through Redis (`bot.delivery.budget`); refused, the batch waits for the
window. 429: hold that chat for retry_after (Telegram's seconds, on the bot's possibly scaled clock)
and send the same batch again. A deleted topic is re-created (or given up for the project topic, then
General) and its bindings moved; a closed one is reopened; HTML Telegram refuses goes again as plain
text. A batch counts as shown only when Telegram accepted it (a digest: with every event folded in it).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable

from telegram.error import BadRequest, Forbidden, NetworkError, RetryAfter, TelegramError

from bot.delivery.budget import SharedBudget
from bot.delivery.failures import Failure, classify
from bot.delivery.forum import Forum, retry_seconds
from bot.delivery.outbound import Batch, Outbox, Outgoing, TopicKey
from bot.delivery.waiting import wait_set
from bot.topics.routing import topic_name
from bot.topics.topics import TopicInfo, TopicRegistry

log = logging.getLogger(__name__)

Accepted = Callable[[Batch, int | None], Awaitable[None]]
MAX_REFUSALS = 3  # the same batch refused this often for no known reason is given up (and logged)
MAX_BACKOFF = 30.0
MAX_LOADING = 2.0  # never hold messages longer than this while a backlog is read
TIDY_RESERVE = 5  # tidying (buttons off an answered question) never takes the minute's last units
MAX_NOW_TRIES = 4  # a call a person waits on, refused by the flood limit this often, is given up


class Sender:
    def __init__(
        self,
        forum: Forum,
        outbox: Outbox,
        registry: TopicRegistry,
        accepted: Accepted,
        budget: SharedBudget | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.forum = forum
        self.outbox = outbox
        self.registry = registry
        self.accepted = accepted
        self.budget = budget  # None: this process alone paces the chat
        self.clock = clock
        self._wake = asyncio.Event()
        self._refusals: dict[TopicKey, int] = {}
        self._errors = 0
        self._loaded = asyncio.Event()
        self._loaded.set()
        self._loading_since: float | None = None  # when the backlog being read began to be read
        self._started = 0.0  # when the call to Telegram under way began
        self._tidying: set[asyncio.Task[None]] = set()
        self._folding: set[int] = set()  # chats folding routine events, as last logged

    def put(self, item: Outgoing) -> None:
        self.outbox.put(item, self.clock())
        self._told_folding(item.chat)
        if item.urgent:
            self._loaded.set()  # what waits on a person does not wait for a backlog to be read
        self._wake.set()

    def _told_folding(self, chat: int) -> None:
        """One line in the log when the chat starts or stops folding routine events into digests."""
        folding = self.outbox.folding(chat)
        if folding != (chat in self._folding):
            if folding:
                self._folding.add(chat)
                backlog = self.outbox.folder.backlog(chat)
                log.info("chat %s: folding routine events into digests (%d messages waiting)", chat, backlog)
            else:
                self._folding.discard(chat)
                log.info("chat %s: routine events one message each again", chat)

    def put_output(self, thread: int | None, text: str, tokens: tuple[str, ...]) -> None:
        self.outbox.put_output(self.forum.chat_id, thread, text, tokens)
        self._wake.set()

    def set_status(self, thread: int | None, html: str) -> None:
        """Topic `thread`'s live status line should read `html` ("": none). Latest wins."""
        self.outbox.set_status(self.forum.chat_id, thread, html)
        self._wake.set()

    def adopt_status(self, thread: int, message_id: int) -> None:
        """A status message an earlier bot left in topic `thread`."""
        self.outbox.adopt_status(self.forum.chat_id, thread, message_id)
        self._wake.set()

    def new_turn(self, thread: int | None, tokens: tuple[str, ...]) -> None:
        """The agent of topic `thread` started a new turn: its output goes in a new message."""
        self.outbox.new_turn(self.forum.chat_id, thread, tokens)
        self._wake.set()

    async def show_now(self, batch: Batch, tries: int = MAX_NOW_TRIES) -> int:
        """Send or edit `batch` at once, outside the outbox: a person is looking at it. The call is
        counted against the chat's limits; a 429 holds the chat (the outbox waits too) and the call goes
        again after retry_after, up to `tries` times in all. Other refusals go to the caller."""
        refused = 0
        while True:
            await self._spend()  # counted even when the minute is spent: it goes all the same
            self.outbox.pacer(batch.chat).record(self.clock())
            try:
                return await self.forum.show(batch)
            except RetryAfter as e:
                refused += 1
                seconds = self.outbox.limits.local_seconds(retry_seconds(e))
                self.outbox.hold(batch.chat, self.clock() + seconds)
                if refused >= tries:
                    raise
                log.info("telegram: flood limit in chat %s: calling again in %.2fs", batch.chat, seconds)
                await asyncio.sleep(seconds)

    async def drop_buttons(self, message_id: int) -> None:
        """Tidy a message's buttons away once the minute's budget has room to spare (in the background;
        given up after a minute of waiting, the buttons then stay)."""
        task = asyncio.get_running_loop().create_task(self._tidy(message_id))
        self._tidying.add(task)
        task.add_done_callback(self._tidying.discard)

    async def _tidy(self, message_id: int) -> None:
        pacer = self.outbox.pacer(self.forum.chat_id)
        gap = 1 / self.outbox.limits.per_second
        deadline = self.clock() + self.outbox.limits.window
        while True:
            wait = pacer.wait(self.clock(), TIDY_RESERVE)
            if wait <= 0 and await self._spend(TIDY_RESERVE):
                break
            if self.clock() + max(wait, gap) > deadline:
                log.info("message %s keeps its buttons: the minute's budget stayed short", message_id)
                return
            await asyncio.sleep(max(wait, gap))
        try:
            await self.forum.drop_buttons(message_id)
        except TelegramError as e:  # it had none, or it is gone: nothing to tidy
            log.debug("message %s keeps its markup: %s", message_id, e)
        pacer.record(self.clock())

    async def _spend(self, reserve: int = 0) -> bool:
        """A unit of the shared minute budget for one call to Telegram; the pacer hears the window."""
        if self.budget is None:
            return True
        spent = await self.budget.spend(self.outbox.limits.per_minute - reserve)
        self.outbox.pacer(self.forum.chat_id).heard(spent.others)
        return spent.granted

    def loading(self, busy: bool) -> None:
        """A backlog is being read: hold new messages until it is all queued, so it merges; for at most
        MAX_LOADING from when the reading began (a stream that never goes quiet is always being read)."""
        if busy:
            if self._loading_since is None:
                self._loading_since = self.clock()
            self._loaded.clear()
        else:
            self._loading_since = None
            self._loaded.set()

    async def run(self) -> None:
        if self.budget is not None:  # what an earlier (or another) bot spent in the last minute
            self.outbox.pacer(self.forum.chat_id).heard(await self.budget.look())
        while True:
            held = (
                self._loading_since + MAX_LOADING - self.clock() if self._loading_since is not None else 0.0
            )
            if not self._loaded.is_set() and held > 0:
                await wait_set(self._loaded, held)
            self._wake.clear()
            now = self.clock()
            batch = self.outbox.take(now)
            self._told_folding(self.forum.chat_id)
            if batch is None:
                await wait_set(self._wake, self.outbox.wait(now))
                continue
            if batch.counted and not await self._spend(batch.reserve):
                self.outbox.put_back(batch)  # spent by another bot meanwhile: wait for the window
                continue
            if batch.status is not None:
                await self._deliver_status(batch)
            else:
                await self._deliver(batch)

    async def _deliver(self, batch: Batch) -> None:
        if batch.empty:
            await self._done(batch, None)
            return
        self._started = self.clock()  # Telegram paces requests by when they arrive, not when answered
        try:
            message_id = await self.forum.show(batch)
        except RetryAfter as e:
            seconds = self.outbox.limits.local_seconds(retry_seconds(e))
            log.warning("telegram: flood limit in chat %s: waiting %.2fs", batch.chat, seconds)
            self.outbox.hold(batch.chat, self.clock() + seconds)
            self.outbox.put_back(batch)
            return
        except BadRequest as e:
            await self._refused(batch, e)
            return
        except (NetworkError, Forbidden, TelegramError) as e:
            self._back_off(batch, e)
            return
        await self._done(batch, message_id)

    async def _deliver_status(self, batch: Batch) -> None:
        """A status line change: best effort. Refused, it is tried again with the latest text later."""
        started = self.clock()
        try:
            if batch.delete is not None:
                await self.forum.delete(batch.delete)
                message_id: int | None = None
            else:
                message_id = await self.forum.show(batch)
        except RetryAfter as e:
            self.outbox.hold(batch.chat, self.clock() + self.outbox.limits.local_seconds(retry_seconds(e)))
            self.outbox.status_failed(batch, started, gone=False)
            return
        except TelegramError as e:
            failure = classify(e.message) if isinstance(e, BadRequest) else Failure.OTHER
            if failure is Failure.NOT_MODIFIED:
                self.outbox.sent(batch, started, batch.edit)
                return
            log.info("status line in topic %s not changed: %s", batch.thread, e)
            self.outbox.status_failed(batch, started, failure is Failure.MESSAGE_GONE)
            if failure is Failure.MESSAGE_GONE and batch.delete is not None:
                await self.accepted(batch, None)  # gone is as good as deleted
            return
        self.outbox.sent(batch, started, message_id)
        await self.accepted(batch, message_id)

    async def _done(self, batch: Batch, message_id: int | None) -> None:
        self._refusals.pop(batch.key, None)
        self._errors = 0
        self.outbox.sent(batch, self._started, message_id)
        if batch.digest:
            folded = self.outbox.folder.folded
            log.info(
                "topic %s: digest shows %d more events (%d folded in all)",
                batch.thread,
                len(batch.entries),
                folded,
            )
        await self.accepted(batch, message_id)

    def _back_off(self, batch: Batch, error: TelegramError) -> None:
        """Telegram unreachable, or the bot not allowed in the chat: keep the batch and try again later."""
        self._errors += 1
        delay = min(MAX_BACKOFF, 0.5 * 2 ** min(self._errors, 8))
        log.warning("telegram: %s; trying again in %.1fs", error, delay)
        self.outbox.hold(batch.chat, self.clock() + delay)
        self.outbox.put_back(batch)

    async def _refused(self, batch: Batch, error: BadRequest) -> None:
        failure = classify(error.message)
        if failure is Failure.NOT_MODIFIED:
            await self._done(batch, batch.edit)
        elif failure is Failure.BAD_MARKUP:
            await self._send_plain(batch, error)
        elif failure is Failure.MESSAGE_GONE and batch.edit is not None and not batch.streaming:
            self.outbox.put_back_new(batch)  # a dialog's message deleted: it is told anew
        elif failure is Failure.MESSAGE_GONE and batch.edit is not None:
            self.outbox.restart_stream(batch.chat, batch.thread)
            self.outbox.put_back(batch)
        elif failure is Failure.TOPIC_CLOSED and batch.thread is not None:
            await self._reopen(batch)
        elif failure is Failure.TOPIC_GONE and batch.thread is not None:
            await self._replace_topic(batch, batch.thread)
        else:
            self._give_up_later(batch, error)

    async def _send_plain(self, batch: Batch, error: BadRequest) -> None:
        log.warning(
            "telegram refused the markup of a message in topic %s (%s): sending plain text",
            batch.thread,
            error,
        )
        try:
            message_id = await self.forum.show(batch, plain=True)
        except TelegramError as e:
            self._give_up_later(batch, e)
            return
        await self._done(batch, message_id)

    def _give_up_later(self, batch: Batch, error: TelegramError) -> None:
        refusals = self._refusals[batch.key] = self._refusals.get(batch.key, 0) + 1
        if refusals < MAX_REFUSALS:
            log.warning("telegram refused a message for topic %s: %s (try %d)", batch.thread, error, refusals)
            self.outbox.hold(batch.chat, self.clock() + refusals)
            self.outbox.put_back(batch)
            return
        self._refusals.pop(batch.key, None)
        log.error(
            "telegram refused a message for topic %s %d times (%s); giving it up: %s stay unacknowledged",
            batch.thread,
            refusals,
            error,
            list(batch.tokens),
        )

    async def _reopen(self, batch: Batch) -> None:
        assert batch.thread is not None
        try:
            await self.forum.reopen_topic(batch.thread)
        except BadRequest as e:
            if "topic_not_modified" in e.message.lower():  # open again already
                self.outbox.put_back(batch)
                return
            log.warning("topic %s is closed and cannot be reopened (%s)", batch.thread, e)
            await self._replace_topic(batch, batch.thread)
            return
        except TelegramError as e:
            self._back_off(batch, e)
            return
        log.info("reopened closed topic %s", batch.thread)
        self.outbox.put_back(batch)

    async def _replace_topic(self, batch: Batch, old: int) -> None:
        """Topic `old` is gone: re-create it under its name, else use the project topic, else General."""
        self.outbox.put_back(batch)
        bound = self.registry.bound_to(old)
        info = await self.registry.info(old)
        new: int | None = None
        if bound:
            name = info.name if info is not None and info.name else _default_name(bound, info)
            try:
                new = await self.forum.create_topic(name)
            except RetryAfter as e:
                seconds = self.outbox.limits.local_seconds(retry_seconds(e))
                self.outbox.hold(batch.chat, self.clock() + seconds)
                return
            except TelegramError as e:
                log.warning("topic %s is gone and cannot be re-created (%s)", old, e)
                new = self._fallback(bound, info, old)
            if new is not None:
                await self.registry.move(old, new)
                log.info("topic %s (%s) was gone: now topic %s", old, name, new)
            else:
                await self.registry.unbind(old)
        self.outbox.move(batch.chat, old, new)
        self.outbox.restart_stream(batch.chat, new)

    def _fallback(self, bound: list[tuple[str, str]], info: TopicInfo | None, old: int) -> int | None:
        project = info.project if info is not None else ""
        project = project or next((key for kind, key in bound if kind == "project"), "")
        thread = self.registry.thread_of("project", project) if project else None
        return thread if thread != old else None


def _default_name(bound: list[tuple[str, str]], info: TopicInfo | None) -> str:
    kind, key = bound[0]
    if kind == "project":
        return key
    project = info.project if info is not None else None
    return topic_name(f"merge-{key}" if kind == "merge" else key, project or None)
