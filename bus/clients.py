"""redis-py clients for long-running processes, built from the settings.

The URL is read by `bus.resp.Address`, the one parser the hooks use too, never by redis-py. Blocking
stream reads (`XREAD`/`XREADGROUP ... BLOCK`) need a client without a socket timeout: redis-py would
otherwise cut a read that blocks longer than the timeout. TCP keepalive notices a dead server.
"""

from __future__ import annotations

from typing import Any

import redis

from bus.hotconf import HotConf
from bus.redis_url import bus_url
from bus.resp import Address
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
    """What every redis-py client of ours (sync or async) is made with: where the server is, from
    `Address`, and how to talk to it.

    Replies are str; bytes that are not UTF-8 come through as lone surrogates (`surrogateescape`) instead
    of failing the whole read, so one bad stream entry is one bad entry (`bus.entries`), never a stuck
    consumer. TCP keepalive notices a dead server (a unix socket has no keepalive)."""
    address = Address.from_url(url)
    options: dict[str, Any] = {
        "db": address.db,
        "username": address.username,
        "password": address.password,
        "decode_responses": True,
        "encoding_errors": "surrogateescape",
        "health_check_interval": 30,
    }
    if address.path:
        options["unix_socket_path"] = address.path
        return options
    options |= {"host": address.host, "port": address.port, "socket_keepalive": True}
    if address.tls is not None:
        tls = address.tls
        options |= {"ssl": True, "ssl_cert_reqs": tls.get("ssl_cert_reqs", "required")}
        options |= {
            f"ssl_{k}": tls[f"ssl_{k}"] for k in ("ca_certs", "certfile", "keyfile") if tls.get(f"ssl_{k}")
        }
    return options


def client_for(url: str, *, blocking: bool = False, connect_timeout: float = 2.0) -> redis.Redis:
    """A client with str replies. `blocking=True` for connections that wait in BLOCK reads."""
    return redis.Redis(
        socket_timeout=None if blocking else COMMAND_TIMEOUT,
        socket_connect_timeout=connect_timeout,
        **client_options(url),
    )


def refusal(error: redis.RedisError) -> str | None:
    """What to tell a person when `error` means IB_REDIS_URL's credentials or database are wrong (a
    setting to fix, never an outage); None for any other error."""
    text = str(error)
    if isinstance(error, redis.AuthenticationError) or text.startswith(("DB index", "invalid DB", "NOPERM")):
        return f"IB_REDIS_URL: Redis refused us: {text}; check the user, password and database in the URL"
    return None
