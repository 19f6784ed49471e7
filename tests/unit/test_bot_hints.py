"""The hint `ib up` prints when the bot is off names, in full, each setting the bot cannot start without."""

from __future__ import annotations

import re

import pytest

from bot.config import bot_config
from bot.errors import BotConfigError
from bus.settings.settings import Settings
from worker.cli.stack_commands import bot_help
from worker.service.supervisor_state import BOT_SETTINGS


def test_bot_help_names_what_the_bot_requires() -> None:
    with pytest.raises(BotConfigError) as refused:
        bot_config(Settings(telegram_token=None, telegram_chat_id=None, telegram_allowed_users=[]))
    required = set(re.findall(r"IB_TELEGRAM_[A-Z_]+", str(refused.value)))
    assert required == set(BOT_SETTINGS)
    assert set(re.findall(r"IB_TELEGRAM_[A-Z_]+", bot_help())) == required
