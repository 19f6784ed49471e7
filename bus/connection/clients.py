"""redis-py clients for long-running processes, built from the settings.

The URL is read by `bus.wire.resp.Address`, the one parser the hooks use too, never by redis-py; behind
Sentinel, redis-py's sentinel pool finds the primary and follows its failovers. Blocking
stream reads (`XREAD`/`XREADGROUP ... BLOCK`) need a client without a socket timeout: redis-py would
otherwise cut a read that blocks longer than the timeout. TCP keepalive notices a dead server.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import redis
from redis.sentinel import MasterNotFoundError, Sentinel

if TYPE_CHECKING:
    import redis.asyncio as aredis

from bus.connection.redis_url import bus_url
from bus.settings.hotconf import HotConf
from bus.settings.settings import Settings
from bus.wire.address import Address

COMMAND_TIMEOUT = 10.0
NAMED_PRIMARY = "SENTINEL GET-MASTER-ADDR-BY-NAME"


class NamedPrimary(Sentinel):
    """redis-py's Sentinel, taking the primary the sentinels name, as the hooks' light client does
    (`bus.wire.resp.primary`). redis-py's own reads `SENTINEL MASTERS` and refuses a primary flagged down;
    while a failover moves the other replicas over, the sentinels name the promoted one but still flag the
    old one down, so right after a command's light first contact found the new primary, redis-py found none
    ("No master found", seen in the failover tests beside a CPU hog)."""

    def discover_master(self, service_name: str) -> tuple[str, int]:
        errors: list[str] = []
        for sentinel in self.sentinels:
            try:
                named = sentinel.execute_command(NAMED_PRIMARY, service_name)
            except (redis.ConnectionError, redis.TimeoutError) as e:
                errors.append(f"{sentinel} - {e!r}")
                continue
            if named:
                return _address(named)
        raise _none_named(service_name, errors)


def _address(named: tuple[str | bytes, int]) -> tuple[str, int]:
    """The (host, port) a sentinel named (redis-py parsed its reply)."""
    host = named[0]
    return host.decode() if isinstance(host, bytes) else host, int(named[1])


def _none_named(service: str, errors: list[str]) -> MasterNotFoundError:
    """redis-py's own error (a ConnectionError: an outage to wait out) when no sentinel named a primary."""
    return MasterNotFoundError(
        f"No master found for {service!r}" + (f": {', '.join(errors)}" if errors else "")
    )


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
        wait_replicas=settings.replicas_to_wait,
        wait_ms=settings.redis_wait_ms,
    )


def resolve_url(settings: Settings, cwd: str | None = None, start: bool = True) -> str:
    root = settings.repository(cwd)
    return bus_url(settings.redis_url, str(root) if root else None, start, settings.embedded_port)


def client_options(url: str) -> dict[str, Any]:
    """What every redis-py client of ours (sync or async) is made with: where the server is, from
    `Address`, and how to talk to it.

    Replies are str; bytes that are not UTF-8 come through as lone surrogates (`surrogateescape`) instead
    of failing the whole read, so one bad stream entry is one bad entry (`bus.readers.dead_letters`), never a
    stuck consumer. TCP keepalive notices a dead server (a unix socket has no keepalive)."""
    address = Address.from_url(url)
    options: dict[str, Any] = {
        # no silent retries inside redis-py (its constructor's default): our loops say when Redis is away
        # and decide how to wait (bus.connection.reconnect, the worker's back-off), as `Redis.from_url` did
        "retry": None,
        "db": address.db,
        "username": address.username,
        "password": address.password,
        "decode_responses": True,
        "encoding_errors": "surrogateescape",
        "health_check_interval": 30,
        # no CLIENT SETINFO after connecting: two round trips on every new connection, and redis-py reads its
        # own version from the installed package's metadata (an e-mail parser over METADATA) for it
        "driver_info": None,
    }
    if address.path:
        options["unix_socket_path"] = address.path
        return options
    options["socket_keepalive"] = True
    if not address.service:  # behind Sentinel the pool asks for the primary's host and port
        options |= {"host": address.host, "port": address.port}
    return options | _tls(address)


def _tls(address: Address) -> dict[str, Any]:
    if address.tls is None:
        return {}
    tls = address.tls
    options = {"ssl": True, "ssl_cert_reqs": tls.get("ssl_cert_reqs", "required")}
    return options | {
        f"ssl_{k}": tls[f"ssl_{k}"] for k in ("ca_certs", "certfile", "keyfile") if tls.get(f"ssl_{k}")
    }


def _sentinel_options(address: Address, connect_timeout: float) -> dict[str, Any]:
    """How to ask the sentinels: the URL's TLS, never its credentials (they are the primary's)."""
    return {"socket_connect_timeout": connect_timeout, "socket_timeout": connect_timeout} | _tls(address)


def client_for(url: str, *, blocking: bool = False, connect_timeout: float = 2.0) -> redis.Redis:
    """A client with str replies. `blocking=True` for connections that wait in BLOCK reads."""
    timeouts: dict[str, Any] = {
        "socket_timeout": None if blocking else COMMAND_TIMEOUT,
        "socket_connect_timeout": connect_timeout,
    }
    address = Address.from_url(url)
    if not address.service:
        return redis.Redis(**timeouts, **client_options(url))
    asking = _sentinel_options(address, connect_timeout)
    sentinel = NamedPrimary(address.sentinels, sentinel_kwargs=asking)  # type: ignore[no-untyped-call]
    client: redis.Redis = sentinel.master_for(  # type: ignore[no-untyped-call]
        address.service, **timeouts, **client_options(url)
    )
    return client


def async_client_for(url: str, *, single: bool = False, connect_timeout: float = 5.0) -> aredis.Redis:
    """An asyncio client with str replies and no socket timeout (its stream reads block in Redis);
    `single`: one connection of its own."""
    import redis.asyncio as aredis  # the bot's alone: the other processes do without asyncio
    from redis.asyncio.sentinel import SentinelConnectionPool as AsyncSentinelPool

    timeouts: dict[str, Any] = {"socket_timeout": None, "socket_connect_timeout": connect_timeout}
    address = Address.from_url(url)
    if not address.service:
        return aredis.Redis(single_connection_client=single, **timeouts, **client_options(url))
    asking = _sentinel_options(address, connect_timeout)
    sentinel = _async_named_primary()(address.sentinels, sentinel_kwargs=asking)
    pool = AsyncSentinelPool(  # type: ignore[no-untyped-call]
        address.service, sentinel, **timeouts, **client_options(url)
    )
    return aredis.Redis(connection_pool=pool, single_connection_client=single)


def _async_named_primary() -> type[Any]:
    """NamedPrimary for redis-py's asyncio Sentinel (the bot's), made when first needed: the other
    processes never load asyncio. It asks the sentinels through NamedPrimary on a thread (a discovery is
    rare: a new connection, a failover), so both find the primary one way."""
    import asyncio

    from redis.asyncio.sentinel import Sentinel as AsyncSentinel

    class AsyncNamedPrimary(AsyncSentinel):
        def __init__(self, sentinels: list[tuple[str, int]], sentinel_kwargs: dict[str, Any]) -> None:
            super().__init__(sentinels, sentinel_kwargs=sentinel_kwargs)  # type: ignore[no-untyped-call]
            self.asking = NamedPrimary(sentinels, sentinel_kwargs=sentinel_kwargs)  # type: ignore[no-untyped-call]

        async def discover_master(self, service_name: str) -> tuple[str, int]:
            return await asyncio.to_thread(self.asking.discover_master, service_name)

    return AsyncNamedPrimary


def refusal(error: redis.RedisError) -> str | None:
    """What to tell a person when `error` means IB_REDIS_URL's credentials or database are wrong (a
    setting to fix, never an outage); None for any other error."""
    text = str(error)
    if isinstance(error, redis.AuthenticationError) or text.startswith(("DB index", "invalid DB", "NOPERM")):
        return f"IB_REDIS_URL: Redis refused us: {text}; check the user, password and database in the URL"
    return None
