"""/attention: what waits on a person, oldest first, with how long (as `ib attention` shows it)."""

from __future__ import annotations

from telegram import Update
from telegram.ext import CommandHandler, ContextTypes

from bot.handlers.command_context import answering, asked
from bot.render.render import escape
from bus.inbox.attention import AttentionStore, Item, listing


def attention_text(items: list[Item], now: float) -> str:
    """The message (HTML): a head line, then one line per item. Pure."""
    if not items:
        return "Nothing waits on you."
    lines = [f"<b>{len(items)} waiting on you</b>, oldest first:"]
    lines += [escape(line.strip()) for line in listing(items, now)]
    return "\n".join(lines)


@answering
async def attention_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """What waits on a person, oldest first, with how long: /attention."""
    rt, _message, ask = asked(update, context)
    store = AttentionStore(rt.sync, rt.keys)
    items = await rt.blocking(store.open_items)
    now = await rt.blocking(store.now)
    rt.say(ask.thread, attention_text(items, now), ask.reply_to)


ATTENTION_HANDLERS = (CommandHandler("attention", attention_command),)
