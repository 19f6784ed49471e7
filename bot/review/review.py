"""Review from the phone: /diff sends the file list (with Approve and Request changes) and one picture per
file (the agent's worker renders them); a reply to a picture is a comment on that file, kept until Request
changes sends the comments to the agent as one prompt (bus.inbox.review_comments). Which message shows which
file and lines is kept in Redis for REVIEW_TTL, keyed by the message id Telegram gave it.
"""

from __future__ import annotations

import base64
import binascii
import logging
from typing import Any, Protocol

import redis.asyncio as aredis
from redis.exceptions import RedisError
from telegram import Message

from bot.bot_runtime import BotRuntime
from bot.delivery.outbound import Batch
from bot.errors import BotError
from bot.render.callbacks import Action, Callback
from bot.render.render import Button, escape
from bot.render.review_render import (
    ANCHOR_PREFIX,
    CAPTION_MARK,
    Shown,
    caption,
    file_list,
    shown_from,
    staleness,
)
from bus.commands.worker_commands import DiffReview
from bus.errors import BusError
from bus.stores.agent_store import Agent
from bus.wire.keys import Keys

log = logging.getLogger(__name__)

REVIEW_TTL = 3 * 24 * 3600  # seconds a picture stays answerable


class Ask(Protocol):
    """Who asks and where the answer goes (bot.handlers.actions.Ask, which imports this module)."""

    @property
    def rt(self) -> BotRuntime: ...
    @property
    def thread(self) -> int | None: ...
    @property
    def reply_to(self) -> int | None: ...
    @property
    def sender(self) -> str: ...


async def diff(ask: Ask, agent: Agent) -> None:
    """The agent's change: the file list, then a picture per text file, or the whole diff as a document."""
    answer: Any = await ask.rt.command(agent.worker, DiffReview(agent=agent.id), ask.sender)
    if not isinstance(answer, dict):
        raise BotError(f"{agent.worker} sent no review of {agent.id}")
    files = [f for f in answer.get("files") or [] if isinstance(f, dict)]
    if not files:
        note = str(answer.get("note") or f"{agent.id} has no changes.")
        ask.rt.say(ask.thread, escape(note), ask.reply_to)
        return
    document = answer.get("document")
    approve_data = Callback(Action.APPROVE, agent.id).encode()
    changes_data = Callback(Action.REQUEST_CHANGES, agent.id).encode()
    row = tuple(
        Button(label, data)
        for label, data in (("✓ Approve → merge queue", approve_data), ("✎ Request changes", changes_data))
        if data
    )
    buttons = (row,) if row else ()
    ask.rt.say(
        ask.thread, file_list(agent.id, files, isinstance(document, str)), ask.reply_to, buttons=buttons
    )
    if isinstance(document, str):
        ask.rt.send_file(ask.thread, f"{agent.id}.diff", document.encode(), f"Diff of {escape(agent.id)}")
        return
    for entry in files:
        picture = entry.get("picture")
        if isinstance(picture, dict):
            _send_picture(ask, agent, entry, picture)


def _send_picture(ask: Ask, agent: Agent, entry: dict[str, Any], picture: dict[str, Any]) -> None:
    try:
        png = base64.b64decode(str(picture.get("png") or ""), validate=True)
    except (ValueError, binascii.Error) as e:
        raise BotError(f"{agent.worker} sent a broken picture of {entry.get('path')}") from e
    shown = Shown(
        agent.id, str(entry["path"]), int(picture["first"]), int(picture["last"]), str(entry["digest"])
    )
    ask.rt.send_file(ask.thread, "diff.png", png, caption(entry, picture), photo=True, anchor=shown.anchor())


class ReviewRecords:
    """Keeps, once Telegram accepted a picture, which file and lines its message shows."""

    def __init__(self, client: aredis.Redis, keys: Keys) -> None:
        self.client, self.keys = client, keys

    async def confirm(self, batch: Batch, message_id: int | None) -> None:
        if not batch.anchor or not batch.anchor.startswith(ANCHOR_PREFIX) or message_id is None:
            return
        try:
            await self.client.set(self.keys.review_shown(message_id), batch.anchor, ex=REVIEW_TTL)
        except RedisError as e:
            log.warning("diff picture %s shown, but replies to it will not be found: %s", message_id, e)


async def replied_picture(rt: BotRuntime, message: Message) -> Shown | None:
    """What the picture `message` replies to shows; None when it replies to no /diff picture.
    A picture whose record expired is told, so a comment is never sent without its file."""
    replied = message.reply_to_message
    if replied is None or not replied.photo:
        return None
    found = await rt.client.get(rt.keys.review_shown(replied.message_id))
    shown = shown_from(found.decode() if isinstance(found, bytes) else str(found)) if found else None
    if shown is None and (replied.caption or "").startswith(CAPTION_MARK):
        raise BotError(
            f"that picture is older than {REVIEW_TTL // 86400} days, so which lines it showed is forgotten; "
            "nothing was sent. Send /diff again and reply to the new picture."
        )
    return shown


async def stale_note(ask: Ask, agent: Agent, shown: Shown) -> str | None:
    """Why the picture is out of date (its file changed since), or None (also when the worker cannot say)."""
    if not agent.worker or not await ask.rt.worker_alive(agent.worker):
        return None  # the comment is queued for the worker; waiting on it here would only delay that
    try:
        now: Any = await ask.rt.command(agent.worker, DiffReview(agent=agent.id, pictures=False), ask.sender)
    except BusError as e:
        log.info("could not check %s of %s against its picture: %s", shown.path, agent.id, e)
        return None
    files = [f for f in (now.get("files") or []) if isinstance(f, dict)] if isinstance(now, dict) else []
    return staleness(shown, files)
