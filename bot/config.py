"""What the bot needs from the settings, checked at start: token, chat, allowed users, API and limits.

Pure: takes the one `Settings` object and returns a `BotConfig`, or raises BotConfigError naming every
setting that is missing.
"""

from __future__ import annotations

from dataclasses import dataclass

from bot.delivery.outbound import Limits
from bot.errors import BotConfigError
from bus.settings.settings import Settings
from bus.settings.telegram_setup import missing_telegram_settings

TELEGRAM_FILE_PATH = "/file/bot"


@dataclass(frozen=True)
class BotConfig:
    token: str
    chat_id: int
    allowed_users: frozenset[int]
    api_url: str
    file_url: str
    limits: Limits
    worker_id: str | None  # the default worker for /new and /auto, when IB_WORKER_ID is set

    def allowed(self, chat_id: int | None, user_id: int | None) -> bool:
        """Only configured people, and only in the configured chat."""
        return chat_id == self.chat_id and user_id is not None and user_id in self.allowed_users


def file_url_for(api_url: str) -> str:
    """The file download base that goes with a Bot API base URL (`…/bot` → `…/file/bot`)."""
    base = api_url.rstrip("/")
    if base.endswith("/bot"):
        return base[: -len("/bot")] + TELEGRAM_FILE_PATH
    return base + TELEGRAM_FILE_PATH


def bot_config(settings: Settings) -> BotConfig:
    """The bot's configuration; BotConfigError lists every missing setting and how to set it."""
    problems = missing_telegram_settings(settings)
    if problems or settings.telegram_chat_id is None:
        raise BotConfigError("the bot cannot start: " + "; ".join(problems))
    token = settings.telegram_token.get_secret_value().strip() if settings.telegram_token else ""
    explicit_worker = "worker_id" in settings.model_fields_set
    return BotConfig(
        token=token,
        chat_id=settings.telegram_chat_id,
        allowed_users=frozenset(settings.telegram_allowed_users),
        api_url=settings.telegram_api_url,
        file_url=file_url_for(settings.telegram_api_url),
        limits=Limits().scaled(settings.telegram_time_scale),
        worker_id=settings.worker_id if explicit_worker else None,
    )
