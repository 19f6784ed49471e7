"""redis-py clients for long-running processes, built from the settings.

Blocking stream reads (`XREAD`/`XREADGROUP ... BLOCK`) need a client without a socket timeout: redis-py
would otherwise cut a read that blocks longer than the timeout. TCP keepalive notices a dead server.
"""

from __future__ import annotations

from typing import Any

import redis

from bus.hotconf import HotConf
from bus.redis_url import bus_url
from bus.settings import Settings

COMMAND_TIMEOUT = 10.0


def hotconf(settings: Settings, cwd: str | None = None) -> HotConf:
    """The light view of `settings`, for the code shared with the hot paths."""
    root = settings.repository(cwd)
    return HotConf(
        redis_url=settings.redis_url,
        namespace=settings.namespace,
        events_maxlen=settings.events_maxlen,
        connect_timeout=settings.connect_timeout,
        spool_dir=str(settings.spool_dir),
        max_message_bytes=settings.max_message_bytes,
        listener_name=settings.listener_name,
        agent_id=settings.agent_id,
        root=str(root) if root else None,
    )


def resolve_url(settings: Settings, cwd: str | None = None, start: bool = True) -> str:
    root = settings.repository(cwd)
    return bus_url(settings.redis_url, str(root) if root else None, start)


def client_options(url: str) -> dict[str, Any]:
    """What every redis-py client of ours (sync or async) is made with.

    Replies are str; bytes that are not UTF-8 come through as lone surrogates (`surrogateescape`) instead
    of failing the whole read, so one bad stream entry is one bad entry (`bus.entries`), never a stuck
    consumer. TCP keepalive notices a dead server (a unix socket has no keepalive)."""
    options: dict[str, Any] = {
        "decode_responses": True,
        "encoding_errors": "surrogateescape",
        "health_check_interval": 30,
    }
    if not url.startswith("unix:"):
        options["socket_keepalive"] = True
    return options


def client_for(url: str, *, blocking: bool = False, connect_timeout: float = 2.0) -> redis.Redis:
    """A client with str replies. `blocking=True` for connections that wait in BLOCK reads."""
    return redis.Redis.from_url(
        url,
        socket_timeout=None if blocking else COMMAND_TIMEOUT,
        socket_connect_timeout=connect_timeout,
        **client_options(url),
    )
