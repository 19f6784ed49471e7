"""The bot's settings: refused at start when something it needs is missing, with the setting named."""

from __future__ import annotations

from typing import Any

import pytest

from bot.config import bot_config, file_url_for
from bot.errors import BotConfigError
from bus.settings.settings import Settings

GOOD: dict[str, Any] = {
    "telegram_token": "123:abc",
    "telegram_chat_id": -1001,
    "telegram_allowed_users": [42, 43],
}

MISSING = [
    ("no-token", {"telegram_token": None}, "IB_TELEGRAM_TOKEN"),
    ("blank-token", {"telegram_token": "  "}, "IB_TELEGRAM_TOKEN"),
    ("no-chat", {"telegram_chat_id": None}, "IB_TELEGRAM_CHAT_ID"),
    ("no-allowed-users", {"telegram_allowed_users": []}, "IB_TELEGRAM_ALLOWED_USERS"),
]


@pytest.mark.parametrize(("changes", "setting"), [m[1:] for m in MISSING], ids=[m[0] for m in MISSING])
def test_refuses_to_start_naming_the_setting(changes: dict[str, Any], setting: str) -> None:
    with pytest.raises(BotConfigError, match=setting):
        bot_config(Settings.model_validate({**GOOD, **changes}))


def test_every_missing_setting_is_named_at_once() -> None:
    with pytest.raises(BotConfigError) as caught:
        bot_config(
            Settings.model_validate(
                {"telegram_token": None, "telegram_chat_id": None, "telegram_allowed_users": []}
            )
        )
    for setting in ("IB_TELEGRAM_TOKEN", "IB_TELEGRAM_CHAT_ID", "IB_TELEGRAM_ALLOWED_USERS"):
        assert setting in str(caught.value)


def test_good_settings() -> None:
    config = bot_config(Settings.model_validate({**GOOD, "telegram_time_scale": 10}))
    assert (config.token, config.chat_id, config.allowed_users) == ("123:abc", -1001, frozenset({42, 43}))
    assert config.limits.window == pytest.approx(6.1)  # Telegram's minute and a second, ×10
    assert config.worker_id is None
    assert bot_config(Settings.model_validate({**GOOD, "worker_id": "w1"})).worker_id == "w1"


ALLOWED = [
    ("allowed-user-in-chat", -1001, 42, True),
    ("stranger", -1001, 99, False),
    ("allowed-user-elsewhere", -2002, 42, False),
    ("no-user", -1001, None, False),
]


@pytest.mark.parametrize(("chat", "user", "expected"), [a[1:] for a in ALLOWED], ids=[a[0] for a in ALLOWED])
def test_allowed(chat: int, user: int | None, expected: bool) -> None:
    assert bot_config(Settings.model_validate(GOOD)).allowed(chat, user) is expected


URLS = [
    ("telegram", "https://api.telegram.org/bot", "https://api.telegram.org/file/bot"),
    ("trailing-slash", "http://127.0.0.1:8081/bot/", "http://127.0.0.1:8081/file/bot"),
    ("other", "http://proxy:1/tg", "http://proxy:1/tg/file/bot"),
]


@pytest.mark.parametrize(("api", "expected"), [u[1:] for u in URLS], ids=[u[0] for u in URLS])
def test_file_url_for(api: str, expected: str) -> None:
    assert file_url_for(api) == expected
