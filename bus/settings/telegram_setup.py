"""What the Telegram bot needs from the settings, said as the person must fix it. Pure.

Both the bot (refusing to start) and `ib up` (refusing before it starts anything, rather than leaving a bot
that only crashes and restarts) read the same list."""

from __future__ import annotations

from bus.settings.settings import Settings


def missing_telegram_settings(settings: Settings) -> list[str]:
    """Each setting the bot cannot run without that is not given, with how to give it; [] when complete."""
    problems = []
    token = settings.telegram_token.get_secret_value().strip() if settings.telegram_token else ""
    if not token:
        problems.append("IB_TELEGRAM_TOKEN is not set: give the bot's token from @BotFather")
    if settings.telegram_chat_id is None:
        problems.append(
            "IB_TELEGRAM_CHAT_ID is not set: give the id of the forum supergroup (like -1001234567890)"
        )
    if not settings.telegram_allowed_users:
        problems.append(
            "IB_TELEGRAM_ALLOWED_USERS is empty: nobody could use the bot; "
            "give the comma-separated Telegram user ids allowed to command it"
        )
    return problems
