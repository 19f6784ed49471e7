"""Approve, under /diff's file list: the change goes into its project's merge queue. The tap is answered at
once with the request's place in merge order, and one message in the topic follows the request — queued,
merging, then merged or why not — edited as it goes. The bot reads the request's record on the bus
(bus.merges) every POLL_SECONDS; the message is a teardown note (bot.teardown_note), so the agent's own
events of the teardown that follows a merge fold into it too.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from redis.exceptions import RedisError
from telegram.error import TelegramError

from bot.render import escape
from bot.review import Ask
from bot.review_render import approval, merge_stage, queued_stage
from bus.agent_store import Agent
from bus.errors import BusError, NotFound
from bus.merge_request import MergeRequest
from bus.merges import MergeStore
from bus.review_comments import ReviewComments
from bus.worker_commands import QueueMerge

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

    def head(stage: str) -> str:
        return escape(approval(agent.id, where, stage, dropped))

    first = head("⏳ " + queued_stage(info.get("position")))
    try:
        await ask.rt.notes.open(agent.id, ask.thread, ask.reply_to, first)
    except TelegramError as e:  # said the usual way; the merge's own events tell the rest (project topic)
        log.info("approval note of %s not sent (%s); said without following", agent.id, e)
        ask.rt.say(ask.thread, first, ask.reply_to)
        return
    merge_id = str(info.get("merge") or "")
    ask.rt.in_background(_follow(ask, agent.id, merge_id, head), f"approval-{agent.id}")


async def _follow(ask: Ask, agent: str, merge_id: str, head: Callable[[str], str]) -> None:
    """Edit the note at each step of the request until it leaves the queue (or FOLLOW_SECONDS pass)."""
    rt = ask.rt
    store = MergeStore(rt.sync, rt.keys, rt.events_maxlen)
    loop = asyncio.get_running_loop()
    end, shown = loop.time() + FOLLOW_SECONDS, ""
    while loop.time() < end:
        await asyncio.sleep(POLL_SECONDS)
        try:
            req, place = await rt.blocking(_where, store, merge_id)
        except RedisError as e:  # Redis away for a moment: the next look tells
            log.info("approval of %s: merge %s not read: %s", agent, merge_id, e)
            continue
        text = head(merge_stage(req, place))
        if req is None or not req.is_open:
            await rt.notes.close(agent, text)
            log.info("approval of %s: merge %s ended %s", agent, merge_id, req.status if req else "gone")
            return
        if text != shown:
            await rt.notes.retitle(agent, text)
            shown = text
    await rt.notes.close(agent, head("⏳ still in the merge queue; /merges shows where"))


def _where(store: MergeStore, merge_id: str) -> tuple[MergeRequest | None, int | None]:
    try:
        req = store.get(merge_id)
    except NotFound:
        return None, None
    return req, store.place(req) if req.status == "queued" else None
