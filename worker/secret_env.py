"""Which ittybus environment variables hold a secret (the bot token, any other `IB_*` token, key or
password, a Redis URL with credentials), and an environment without them: the tmux layer scrubs its
server of them, and an agent's explicit environment never passes them. Pure."""

from __future__ import annotations

from collections.abc import Mapping

_SECRET_WORDS = ("TOKEN", "SECRET", "PASSWORD", "PASSWD", "KEY", "CREDENTIAL")


def secret_name(name: str, value: str = "") -> bool:
    """An ittybus variable that holds a secret: the bot token and any other `IB_*` token, key or
    password, and a Redis URL with credentials in it."""
    if not name.startswith("IB_"):
        return False
    if name == "IB_REDIS_URL":
        return "@" in value
    return any(word in name for word in _SECRET_WORDS)


def secret_names(environment: Mapping[str, str | bool]) -> list[str]:
    """The secret names in a tmux global environment as libtmux's `show_environment` reads it (a
    variable unset with `-NAME` has the value True)."""
    return [
        name for name, value in environment.items() if isinstance(value, str) and secret_name(name, value)
    ]


def without_secrets(environ: Mapping[str, str]) -> dict[str, str]:
    """`environ` minus its ittybus secrets and an agent's identity: for the tmux client, so a server it
    starts has neither (an `IB_AGENT_ID` above every pane would name that agent as the caller of all
    their `ib` commands, worker.boundary.identity)."""
    return {k: v for k, v in environ.items() if not secret_name(k, v) and k != "IB_AGENT_ID"}
