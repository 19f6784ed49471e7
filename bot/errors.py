"""The bot package's exceptions: one base, and the kinds a person or an operator gets told about."""

from __future__ import annotations


class BotError(Exception):
    """Base of every error raised by the bot package."""


class BotConfigError(BotError):
    """The bot cannot start with these settings; the message names the setting and the fix."""


class CommandUsage(BotError):
    """What a person typed after a command does not fit; the message shows the usage."""
