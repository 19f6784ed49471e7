"""`ib bot`: the Telegram bot. It lives in the `bot` package, imported only when this command runs."""

from __future__ import annotations

import typer


def bot(
    verbose: bool = typer.Option(False, "--verbose", "-v", help="log every event shown and command"),
) -> None:
    """Run the Telegram bot: events into forum topics, what people type back to agents.

    Needs IB_TELEGRAM_TOKEN, IB_TELEGRAM_CHAT_ID and IB_TELEGRAM_ALLOWED_USERS. Example: ib bot
    """
    from bot.app import run

    raise typer.Exit(run(verbose))
