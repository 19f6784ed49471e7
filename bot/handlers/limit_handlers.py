"""/limits: each account held by its plan's usage limit, until when, and the agents parked on it, read
from the bus (`bus.stores.limit_store`) as `ib limits` reads it."""

from __future__ import annotations

import time
from collections.abc import Sequence

from telegram import Update
from telegram.ext import CommandHandler, ContextTypes

from bot.handlers.command_context import answering, asked
from bot.render.render import escape
from bus.costs.usage_limits import Limit, limit_lines
from bus.stores.limit_store import LimitStore


def limits_text(found: Sequence[Limit], now: float) -> str:
    """The message (HTML): one block per limited account, or that none is."""
    if not found:
        return escape("No account is limited: agents and /auto go on as usual.")
    return "\n".join(escape(line) for limit in found for line in limit_lines(limit, now))


@answering
async def limits_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """The usage limits in force, their resets and parked agents: /limits."""
    rt, _message, ask = asked(update, context)
    found = await rt.blocking(LimitStore(rt.sync, rt.keys).all)
    rt.say(ask.thread, limits_text(found, time.time()), ask.reply_to)


LIMIT_HANDLERS = (CommandHandler("limits", limits_command),)
