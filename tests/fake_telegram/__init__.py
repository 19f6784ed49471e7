"""A fake Telegram Bot API server for tests: python-telegram-bot talks to it over HTTP (`base_url`).

It keeps one forum supergroup (topics, messages, edits, reactions, documents), feeds updates to
getUpdates, and answers like Telegram, limits and error texts included. See `FakeTelegram`.
"""

from __future__ import annotations

from tests.fake_telegram.errors import ApiError
from tests.fake_telegram.forum import BOT_ID, CHAT_ID, CallbackAnswer, FakeDocument, FakeMessage, FakeTopic
from tests.fake_telegram.limits import Limits
from tests.fake_telegram.server import DEFAULT_TOKEN, FakeTelegram

__all__ = [
    "BOT_ID",
    "CHAT_ID",
    "DEFAULT_TOKEN",
    "ApiError",
    "CallbackAnswer",
    "FakeDocument",
    "FakeMessage",
    "FakeTelegram",
    "FakeTopic",
    "Limits",
]
