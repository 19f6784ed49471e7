"""The bot's door: every update passes here first (handler group -1). Only allowed people in the
configured chat get through; anything else, messages and button taps alike, stops here unanswered and
is logged.
"""

from __future__ import annotations

import logging

from telegram import Update
from telegram.ext import ApplicationHandlerStop, ContextTypes

from bot.bot_runtime import runtime

log = logging.getLogger(__name__)


async def gate(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Let allowed people in the configured chat through; stop everything else before any handler."""
    chat, user = update.effective_chat, update.effective_user
    chat_id, user_id = (chat.id if chat else None), (user.id if user else None)
    if runtime(context).config.allowed(chat_id, user_id):
        return
    kind = "button tap" if update.callback_query is not None else "message"
    log.warning("ignored %s from user %s in chat %s (update %s)", kind, user_id, chat_id, update.update_id)
    raise ApplicationHandlerStop
