"""The forum supergroup through python-telegram-bot: the few Bot API calls the bot makes.

A thin shell: no retries and no decisions here (those are `bot.delivery.sender`'s); errors are PTB's.
Messages for the General topic carry no thread id.
"""

from __future__ import annotations

import html
import re
import warnings
from datetime import timedelta

from telegram import (
    Bot,
    BotCommand,
    InlineKeyboardButton,
    InlineKeyboardMarkup,
    Message,
    ReactionTypeEmoji,
    ReplyParameters,
)
from telegram.constants import ParseMode
from telegram.error import RetryAfter
from telegram.warnings import PTBDeprecationWarning

from bot.delivery.outbound import Batch
from bot.render.render import Button

_TAG = re.compile(r"<[^<>]*>")


def keyboard(rows: tuple[tuple[Button, ...], ...]) -> InlineKeyboardMarkup | None:
    if not rows:
        return None
    return InlineKeyboardMarkup(
        [[InlineKeyboardButton(b.label, callback_data=b.data) for b in row] for row in rows]
    )


def plain_text(html_text: str) -> str:
    """What a person would read in `html_text`, for sending without markup."""
    return html.unescape(_TAG.sub("", html_text))


def retry_seconds(error: RetryAfter) -> float:
    """retry_after in seconds, whichever type this PTB version gives."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PTBDeprecationWarning)
        value = error.retry_after
    return value.total_seconds() if isinstance(value, timedelta) else float(value)


class Forum:
    def __init__(self, bot: Bot, chat_id: int) -> None:
        self.bot = bot
        self.chat_id = chat_id

    async def show(self, batch: Batch, plain: bool = False) -> int:
        """Send or edit what `batch` holds; returns the message id."""
        text = plain_text(batch.text) if plain else batch.text
        mode = None if plain else ParseMode.HTML
        markup = keyboard(batch.buttons)
        if batch.edit is not None:
            edited = await self.bot.edit_message_text(
                text, self.chat_id, batch.edit, parse_mode=mode, reply_markup=markup
            )
            return edited.message_id if isinstance(edited, Message) else batch.edit
        reply = (
            ReplyParameters(batch.reply_to, allow_sending_without_reply=True)
            if batch.reply_to is not None
            else None
        )
        if batch.document is not None:
            upload = self.bot.send_photo if batch.document.photo else self.bot.send_document
            sent = await upload(
                self.chat_id,
                batch.document.content,
                filename=batch.document.filename,
                caption=text or None,
                parse_mode=mode,
                message_thread_id=batch.thread,
                reply_markup=markup,
                reply_parameters=reply,
            )
            return sent.message_id
        sent = await self.bot.send_message(
            self.chat_id,
            text,
            parse_mode=mode,
            message_thread_id=batch.thread,
            reply_markup=markup,
            reply_parameters=reply,
            link_preview_options=None,
        )
        return sent.message_id

    async def create_topic(self, name: str) -> int:
        topic = await self.bot.create_forum_topic(self.chat_id, name)
        return topic.message_thread_id

    async def reopen_topic(self, thread: int) -> None:
        await self.bot.reopen_forum_topic(self.chat_id, thread)

    async def react(self, message_id: int, emoji: str) -> None:
        await self.bot.set_message_reaction(self.chat_id, message_id, ReactionTypeEmoji(emoji))

    async def delete(self, message_id: int) -> None:
        await self.bot.delete_message(self.chat_id, message_id)

    async def drop_buttons(self, message_id: int) -> None:
        await self.bot.edit_message_reply_markup(self.chat_id, message_id, reply_markup=None)

    async def register_commands(self, commands: tuple[tuple[str, str], ...]) -> None:
        await self.bot.set_my_commands([BotCommand(name, description) for name, description in commands])
