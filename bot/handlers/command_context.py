"""What every command and button handler of the bot shares: the topic a message is in, who sent it, the
words after the command, the `Ask` it answers through, and `answering` (a command's) and `tapping` (a
button's), which say a mistake or a refusal in the topic instead of failing silently. The handlers
themselves, in bot.handlers: topic_handlers (the chat and its topics), agent_handlers, task_handlers,
plan_handlers, schedule_handlers, and relay (the text and taps for agents).
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

from telegram import CallbackQuery, Message, Update
from telegram.ext import ContextTypes

from bot.bot_runtime import BotRuntime, runtime
from bot.errors import BotError
from bot.handlers.actions import Ask
from bot.handlers.chat_commands import rest_of
from bot.render.callbacks import Callback, parse_callback
from bot.render.render import escape
from bus.errors import BusError

log = logging.getLogger(__name__)

Handler = Callable[[Update, ContextTypes.DEFAULT_TYPE], Coroutine[Any, Any, None]]
Tap = Callable[[Ask, Callback, CallbackQuery], Awaitable[None]]


def thread_of(message: Message) -> int | None:
    """The topic a message is in; None for General (whose messages carry no thread id)."""
    return message.message_thread_id if message.is_topic_message else None


def sender_of(update: Update) -> str:
    user = update.effective_user
    return f"telegram:{user.id}" if user is not None else "telegram"


def words(update: Update) -> list[str]:
    """What follows the command, split on spaces."""
    message = update.effective_message
    return rest_of(message.text or "").split() if message is not None else []


def asked(update: Update, context: ContextTypes.DEFAULT_TYPE) -> tuple[BotRuntime, Message, Ask]:
    message = update.effective_message
    if message is None:
        raise BotError("a command without a message")
    rt = runtime(context)
    return rt, message, Ask(rt, thread_of(message), message.message_id, sender_of(update))


def answering(handler: Handler) -> Handler:
    """Say a person's mistake, or why the bus refused, in the topic instead of failing silently."""

    @functools.wraps(handler)
    async def run(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        message = update.effective_message
        where = thread_of(message) if message is not None else None
        log.info("%s from %s in topic %s", handler.__name__, sender_of(update), where)
        try:
            await handler(update, context)
        except (BotError, BusError) as e:
            message = update.effective_message
            log.info("%s: %s", handler.__name__, e)
            if message is not None:
                runtime(context).say(thread_of(message), escape(f"⚠ {e}"), message.message_id)

    return run


def tapping(tap: Tap) -> Handler:
    """A button's handler: the tap read, the `Ask` of the message it is on, a refusal said in the topic."""

    @functools.wraps(tap)
    async def run(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        query = update.callback_query
        tapped = parse_callback(query.data or "") if query is not None else None
        if query is None or tapped is None:  # PTB gives a tap without data to the first button handler
            await on_unknown_tap(update, context)
            return
        source = query.message if isinstance(query.message, Message) else None
        thread = thread_of(source) if source is not None else None
        ask = Ask(runtime(context), thread, source.message_id if source else None, sender_of(update))
        try:
            await tap(ask, tapped, query)
        except (BotError, BusError) as e:
            ask.rt.say(thread, escape(f"⚠ {e}"), ask.reply_to)

    return run


async def on_unknown_tap(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """A tap whose data is no button of ours (forged or garbled): logged, and answered so the client's
    spinner stops."""
    query = update.callback_query
    if query is not None:
        log.warning("ignored button with data %r from user %s", query.data, query.from_user.id)
        await query.answer()
