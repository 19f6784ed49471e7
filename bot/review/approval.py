"""Approve, under /diff's file list: the change goes into its project's merge queue. The tap is answered at
once with the request's place in merge order, and one message in the topic follows the request — queued,
merging, then merged or why not — edited as it goes. The bot reads the request's record on the bus
(bus.tasks.merges) every POLL_SECONDS; the message is a teardown note (bot.delivery.teardown_note), so the
agent's own events of the teardown that follows a merge fold into it too. What is followed is kept in Redis
(bot.review.approval_memory): a restarted bot follows each note on (`resume`) and brings it to its last word.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable

from redis.exceptions import RedisError
from telegram.error import TelegramError

from bot.bot_runtime import BotRuntime
from bot.render.render import escape
from bot.render.review_render import approval, merge_stage, queued_stage
from bot.review.approval_memory import ApprovalMemory, Followed
from bot.review.review import Ask
from bus.commands.worker_commands import QueueMerge
from bus.errors import BusError, NotFound
from bus.inbox.review_comments import ReviewComments
from bus.stores.agent_store import Agent
from bus.tasks.merge_request import MergeRequest
from bus.tasks.merges import MergeStore

log = logging.getLogger(__name__)

POLL_SECONDS = 1.0
FOLLOW_SECONDS = 24 * 3600.0  # then the message stops following and points at /merges
POPUP_CHARS = 200  # Telegram's limit on a callback answer

Answer = Callable[[str], Awaitable[object]]


async def approve(ask: Ask, agent: Agent, answer: Answer) -> None:
    """Queue the change (through the agent's worker), answer the tap with its place, then follow it."""
    try:
        queued: object = await ask.rt.command(agent.worker, QueueMerge(agent=agent.id), ask.sender)
    except BusError as e:
        await answer(str(e)[:POPUP_CHARS])
        raise
    info = queued if isinstance(queued, dict) else {}
    await answer(f"{agent.id} is {queued_stage(info.get('position'))}"[:POPUP_CHARS])
    where = f"{info.get('project') or agent.project or '?'} → {info.get('target') or '?'}"
    dropped = await ask.rt.blocking(ReviewComments(ask.rt.sync, ask.rt.keys).drop, agent.id)
    first = _head(agent.id, where, dropped, "⏳ " + queued_stage(info.get("position")))
    try:
        message = await ask.rt.notes.open(agent.id, ask.thread, ask.reply_to, first)
    except TelegramError as e:  # said the usual way; the merge's own events tell the rest (project topic)
        log.info("approval note of %s not sent (%s); said without following", agent.id, e)
        ask.rt.say(ask.thread, first, ask.reply_to)
        return
    followed = Followed(
        agent=agent.id,
        merge=str(info.get("merge") or ""),
        thread=ask.thread,
        message=message,
        reply_to=ask.reply_to,
        where=where,
        dropped=dropped,
        started=time.time(),
    )
    try:
        await ApprovalMemory(ask.rt.client, ask.rt.keys).keep(followed)
    except RedisError as e:  # followed all the same, only not after a restart
        log.warning("approval of %s: merge %s not kept for a restart: %s", agent.id, followed.merge, e)
    ask.rt.in_background(follow(ask.rt, followed, first), f"approval-{agent.id}")


async def resume(rt: BotRuntime) -> None:
    """At the bot's start, before its events are read (the teardown's events fold into the note): follow on
    every Approve note a bot was following when it stopped."""
    for followed in await ApprovalMemory(rt.client, rt.keys).recall():
        head = _head(followed.agent, followed.where, followed.dropped, "⏳ " + queued_stage(None))
        rt.notes.reopen(followed.agent, followed.thread, followed.message, followed.reply_to, head)
        rt.in_background(follow(rt, followed), f"approval-{followed.agent}")
        log.info("approval of %s: following merge %s again", followed.agent, followed.merge)


async def follow(rt: BotRuntime, followed: Followed, shown: str = "") -> None:
    """Edit the note at each step of the request until it leaves the queue (or FOLLOW_SECONDS pass), then
    forget it; `shown` is what the note says now, when known."""
    store = MergeStore(rt.sync, rt.keys, rt.events_maxlen)
    agent, merge_id = followed.agent, followed.merge
    while True:
        try:
            req, place = await rt.blocking(_where, store, merge_id)
        except RedisError as e:  # Redis away for a moment: the next look tells
            log.info("approval of %s: merge %s not read: %s", agent, merge_id, e)
        else:
            text = _head(agent, followed.where, followed.dropped, merge_stage(req, place))
            if req is None or not req.is_open:
                log.info("approval of %s: merge %s ended %s", agent, merge_id, req.status if req else "gone")
                return await _end(rt, followed, text)
            if text != shown:
                await rt.notes.retitle(agent, text)
                shown = text
        if time.time() >= followed.started + FOLLOW_SECONDS:
            still = "⏳ still in the merge queue; /merges shows where"
            return await _end(rt, followed, _head(agent, followed.where, followed.dropped, still))
        await asyncio.sleep(POLL_SECONDS)


async def _end(rt: BotRuntime, followed: Followed, text: str) -> None:
    """The note's last word, then the record goes (a restart in between says it once more, unchanged)."""
    await rt.notes.close(followed.agent, text)
    try:
        await ApprovalMemory(rt.client, rt.keys).forget(followed)
    except RedisError as e:  # the next start reads the merge ended and says so again, no harm
        log.warning("approval of %s: merge %s not forgotten: %s", followed.agent, followed.merge, e)


def _head(agent: str, where: str, dropped: int, stage: str) -> str:
    return escape(approval(agent, where, stage, dropped))


def _where(store: MergeStore, merge_id: str) -> tuple[MergeRequest | None, int | None]:
    try:
        req = store.get(merge_id)
    except NotFound:
        return None, None
    return req, store.place(req) if req.status == "queued" else None
