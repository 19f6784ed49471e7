"""Default values of the settings that the hot paths (hooks, `ib notify`) read without pydantic.

`bus.settings.settings.Settings` and `bus.settings.hotconf` both take their defaults from here, so they cannot
drift.
"""

from __future__ import annotations

import os

ENV_PREFIX = "IB_"
NAMESPACE = "ib:"
EVENTS_MAXLEN = 100_000
CONNECT_TIMEOUT = 0.5
MAX_MESSAGE_BYTES = 1_048_576
LISTENER_NAME = "default"
REDIS_WAIT_MS = 1000
# the agent programs by name (`--cli`, IB_DEFAULT_CLI), the first the default: the names of
# worker.programs.registry, which has one program for each (bus imports no worker)
AGENT_PROGRAMS = ("claude", "codex", "gemini")


def replicas_to_wait(setting: int | None, redis_url: str | None) -> int:
    """How many replicas must hold a published event before it counts as sent (`WAIT n ms`): the
    setting, else 1 behind Sentinel (an event only the dead primary held is lost in a failover), else 0."""
    if setting is not None:
        return setting
    return 1 if behind_sentinel(redis_url) else 0


def behind_sentinel(redis_url: str | None) -> bool:
    return bool(redis_url) and str(redis_url).partition("://")[0].endswith("+sentinel")


NAMESPACE_FORBIDDEN = set("*?[]\\") | {chr(c) for c in range(33)} | {"\x7f"}


def spool_dir() -> str:
    """Per user: `$XDG_STATE_HOME/ittybus`, else `~/.local/state/ittybus`."""
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return os.path.join(base, "ittybus")


def namespace_problem(value: str) -> str | None:
    """Why a namespace is unusable, or None. Glob characters would break key scans; blanks break logs."""
    if not value or len(value) > 64:
        return "must be 1 to 64 characters"
    bad = sorted({c for c in value if c in NAMESPACE_FORBIDDEN})
    if bad:
        return f"must not contain whitespace, control characters or any of * ? [ ] \\ (found {bad!r})"
    return None
