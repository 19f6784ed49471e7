"""Where a Redis listens and how to talk to it: `Address`, read from IB_REDIS_URL's forms (plain, TLS, a
unix socket, Sentinel), and the URL as people may see it (password masked). Pure; light enough for the
hooks (stdlib only).
"""

from __future__ import annotations

from bus.errors import ConfigError
from bus.wire.record import Record

TLS_OPTIONS = ("ssl_cert_reqs", "ssl_ca_certs", "ssl_certfile", "ssl_keyfile")
CERT_REQS = ("none", "optional", "required")
SCHEMES = ("redis", "rediss", "unix", "redis+sentinel", "rediss+sentinel")
SENTINEL_PORT = 26379


class Address(Record):
    """Where a Redis listens and how to talk to it, from a `redis://`, `rediss://` or `unix://` URL; or,
    from a `redis+sentinel://` URL, which sentinels name the primary of which service
    (`bus.wire.resp.primary`)."""

    __slots__ = ("db", "host", "password", "path", "port", "sentinels", "service", "tls", "username")

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 6379,
        path: str | None = None,
        username: str | None = None,
        password: str | None = None,
        db: int = 0,
        tls: dict[str, str] | None = None,
        sentinels: tuple[tuple[str, int], ...] = (),
        service: str | None = None,
    ) -> None:
        self.host, self.port, self.path = host, port, path
        self.username, self.password, self.db = username, password, db
        self.tls = tls  # None: plain TCP; else the URL's ssl_* options (empty: verify with the system CAs)
        self.sentinels, self.service = sentinels, service  # the user and password are the primary's

    @classmethod
    def from_url(cls, url: str) -> Address:
        """`redis[s]://[[user]:password@]host[:port][/db][?ssl_...]`, `unix://[[user]:password@]/path[?db=N]`
        or `redis[s]+sentinel://[[user]:password@]host:port[,host:port...]/service[/db][?ssl_...]`.

        Raises ConfigError naming IB_REDIS_URL and what is wrong (the password is never shown)."""
        scheme, sep, rest = url.partition("://")
        if not sep or scheme not in SCHEMES:
            shown = without_password(url)
            what = f"scheme {scheme!r} is not supported" if sep else f"{shown!r} is not a URL"
            raise ConfigError(
                f"IB_REDIS_URL: {what}; use redis://host:port, rediss://host:port (TLS), "
                "unix:///path/to/redis.sock or redis+sentinel://host:port,host:port/service"
            )
        credentials, at, location = rest.rpartition("@")
        user = password = None
        if at:
            name, colon, secret = credentials.partition(":")
            user, password = (_unquote(name) or None), (_unquote(secret) if colon else None)
        location, _, query = location.partition("?")
        shown = without_password(url)
        options = _query(query, shown)
        db = _number(options.pop("db", ""), "db", shown, 0)
        tls = _tls_options(options, scheme.removesuffix("+sentinel"), shown)
        if scheme == "unix":
            if not location.startswith("/"):
                raise ConfigError(f"IB_REDIS_URL: {shown!r} needs an absolute socket path: unix:///path")
            return cls(path=location, username=user, password=password, db=db)
        hostport, _, db_text = location.partition("/")
        if scheme.endswith("+sentinel"):
            service, _, db_text = db_text.partition("/")
            if not service:
                raise ConfigError(
                    f"IB_REDIS_URL: {shown!r} names no service: add /SERVICE after the sentinels"
                )
            if not all(hostport.split(",")):
                raise ConfigError(f"IB_REDIS_URL: cannot read {shown!r}: an empty entry in the sentinel list")
            sentinels = tuple(_host_port(one, shown, SENTINEL_PORT) for one in hostport.split(","))
            db = _number(db_text, "database", shown, db)
            return cls(username=user, password=password, db=db, tls=tls, sentinels=sentinels, service=service)
        host, port = _host_port(hostport, shown, 6379)
        db = _number(db_text, "database", shown, db)
        return cls(host=host, port=port, username=user, password=password, db=db, tls=tls)


def _host_port(hostport: str, shown: str, default_port: int) -> tuple[str, int]:
    """`host[:port]` or `[v6 address][:port]` of a URL."""
    if hostport.startswith("["):  # [::1]:6379
        host, bracket, after = hostport[1:].partition("]")
        if not bracket or (after and not after.startswith(":")):
            raise ConfigError(f"IB_REDIS_URL: cannot read {shown!r}: an IPv6 host needs [address]:port")
        port_text = after.removeprefix(":")
    else:
        host, _, port_text = hostport.partition(":")
    if not host.isascii() or any(c in host for c in " /\\[]"):
        raise ConfigError(f"IB_REDIS_URL: cannot read {shown!r}: bad host name {host!r}")
    port = _number(port_text, "port", shown, default_port)
    if not 0 < port < 65536:
        raise ConfigError(f"IB_REDIS_URL: cannot read {shown!r}: port must be 1 to 65535")
    return host or "127.0.0.1", port


def masked_url(url: str) -> str:
    """The URL for people to see: user and password hidden (`redis://***@127.0.0.1:41234/0`)."""
    scheme, sep, rest = url.partition("://")
    credentials, at, location = rest.rpartition("@")
    return f"{scheme}{sep}***@{location}" if at and credentials else url


def without_password(url: str) -> str:
    """The URL with its password, if any, as `****` (the user name kept): for error lines and for naming
    a bus in files (the spool) that must never hold the secret."""
    scheme, sep, rest = url.partition("://")
    credentials, at, location = rest.rpartition("@")
    if not at or ":" not in credentials:
        return url
    return f"{scheme}{sep}{credentials.partition(':')[0]}:****@{location}"


def _query(query: str, shown: str) -> dict[str, str]:
    options: dict[str, str] = {}
    for pair in query.split("&") if query else ():
        name, _, value = pair.partition("=")
        if name != "db" and name not in TLS_OPTIONS:
            known = ", ".join(("db", *TLS_OPTIONS))
            raise ConfigError(f"IB_REDIS_URL: {shown!r}: unknown option {name!r} (known: {known})")
        options[name] = _unquote(value)
    return options


def _number(text: str, what: str, shown: str, default: int) -> int:
    if not text:
        return default
    if not text.isdigit() or not text.isascii():
        raise ConfigError(f"IB_REDIS_URL: cannot read {shown!r}: {what} must be a number (got {text!r})")
    return int(text)


def _tls_options(options: dict[str, str], scheme: str, shown: str) -> dict[str, str] | None:
    if scheme != "rediss":
        if options:
            raise ConfigError(f"IB_REDIS_URL: {shown!r}: ssl_* options need a rediss:// URL")
        return None
    reqs = options.get("ssl_cert_reqs", "required")
    if reqs not in CERT_REQS:
        raise ConfigError(f"IB_REDIS_URL: {shown!r}: ssl_cert_reqs must be one of {', '.join(CERT_REQS)}")
    return options


def _unquote(text: str) -> str:
    """Percent-decoding of URL credentials (`p%40ss` → `p@ss`)."""
    raw = text.encode("utf-8")
    out = bytearray()
    i = 0
    while i < len(raw):
        pair = raw[i + 1 : i + 3]
        if raw[i] == 0x25 and len(pair) == 2 and all(c in b"0123456789abcdefABCDEF" for c in pair):
            out.append(int(pair, 16))
            i += 3
        else:
            out.append(raw[i])
            i += 1
    return out.decode("utf-8", "replace")
