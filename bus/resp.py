"""A minimal Redis client for the hot paths: RESP2 over one socket, pipelined commands, nothing else.

Hooks run inside an agent's every tool call; importing redis-py costs ~150 ms, this costs ~2 ms.
Encoding and decoding are pure functions; `Connection` is the thin socket shell around them.
Long-running processes use redis-py (`bus.clients`).
"""

from __future__ import annotations

# `_socket` is the C module under `socket`: the Python wrapper imports enum and selectors (~3 ms)
# for features a client of one TCP or unix connection never uses.
import _socket

from bus.errors import BusError, BusUnavailable, ConfigError
from bus.record import Record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, TypeAlias


class ServerError(BusError):
    """An error reply from Redis (`-ERR ...`)."""


class BusRefused(ConfigError):
    """Redis answered but refuses us for good (wrong or missing password, no such database): a setting
    to fix, never an outage to wait out."""


# Error replies that no retry will change: the credentials or the database of IB_REDIS_URL are wrong.
REFUSALS = (
    "WRONGPASS",
    "NOAUTH",
    "NOPERM",
    "ERR AUTH",
    "ERR invalid password",
    "ERR DB index",
    "ERR invalid DB",
)


def refusal(reply: Reply) -> bool:
    """True when `reply` is an error that says the configuration is wrong. Pure."""
    return isinstance(reply, ServerError) and str(reply).startswith(REFUSALS)


Reply: TypeAlias = bytes | int | list["Reply"] | ServerError | None


def encode_command(*args: str | bytes | int | float) -> bytes:
    """One command as a RESP array of bulk strings."""
    out = [b"*%d\r\n" % len(args)]
    for arg in args:
        data = arg if isinstance(arg, bytes) else str(arg).encode("utf-8")
        out.append(b"$%d\r\n%s\r\n" % (len(data), data))
    return b"".join(out)


def parse_reply(buf: bytes, pos: int = 0) -> tuple[Reply, int] | None:  # noqa: PLR0911 - one return per RESP type
    """One reply from `buf` at `pos`: (reply, next position), or None when `buf` holds too little yet."""
    end = buf.find(b"\r\n", pos)
    if end < 0:
        return None
    kind, line = buf[pos : pos + 1], buf[pos + 1 : end]
    nxt = end + 2
    if kind == b"+":
        return line, nxt
    if kind == b"-":
        return ServerError(line.decode("utf-8", "replace")), nxt
    if kind == b":":
        return int(line), nxt
    if kind == b"$":
        size = int(line)
        if size < 0:
            return None, nxt
        if len(buf) < nxt + size + 2:
            return None
        return buf[nxt : nxt + size], nxt + size + 2
    if kind == b"*":
        return _parse_array(buf, int(line), nxt)
    raise BusError(f"unexpected reply from Redis: {buf[pos : pos + 40]!r}")


def _parse_array(buf: bytes, count: int, pos: int) -> tuple[Reply, int] | None:
    if count < 0:
        return None, pos
    items: list[Reply] = []
    for _ in range(count):
        parsed = parse_reply(buf, pos)
        if parsed is None:
            return None
        item, pos = parsed
        items.append(item)
    return items, pos


TLS_OPTIONS = ("ssl_cert_reqs", "ssl_ca_certs", "ssl_certfile", "ssl_keyfile")
CERT_REQS = ("none", "optional", "required")
SCHEMES = ("redis", "rediss", "unix", "redis+sentinel", "rediss+sentinel")
SENTINEL_PORT = 26379


class Address(Record):
    """Where a Redis listens and how to talk to it, from a `redis://`, `rediss://` or `unix://` URL; or,
    from a `redis+sentinel://` URL, which sentinels name the primary of which service (`bus.sentinel`)."""

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
            shown = _without_password(url)
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
        shown = _without_password(url)
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


def _without_password(url: str) -> str:
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


def _connect(address: Address, timeout: float) -> Any:
    candidates: list[tuple[int, tuple[Any, ...] | str]]
    if address.path:
        candidates = [(_socket.AF_UNIX, address.path)]
    else:  # bytes host: getaddrinfo without loading the idna codec
        found = _socket.getaddrinfo(address.host.encode("ascii"), address.port, 0, _socket.SOCK_STREAM)
        candidates = [(family, sockaddr) for family, _t, _p, _c, sockaddr in found]
    error: OSError = OSError(f"no address for {address.host}")
    for family, where in candidates:
        sock = _socket.socket(family, _socket.SOCK_STREAM)
        sock.settimeout(timeout)
        try:
            sock.connect(where)
        except OSError as e:
            sock.close()
            error = e
            continue
        return _with_tls(sock, address, timeout) if address.tls is not None else sock
    raise error


def _with_tls(sock: _socket.socket, address: Address, timeout: float) -> Any:
    """The TLS session over `sock`; `ssl` (~10 ms) is imported only for rediss:// URLs."""
    import socket
    import ssl

    options = address.tls or {}
    context = ssl.create_default_context(cafile=options.get("ssl_ca_certs") or None)
    reqs = options.get("ssl_cert_reqs", "required")
    if reqs != "required":
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE if reqs == "none" else ssl.CERT_OPTIONAL
    if options.get("ssl_certfile"):
        context.load_cert_chain(options["ssl_certfile"], options.get("ssl_keyfile") or None)
    plain = socket.socket(sock.family, _socket.SOCK_STREAM, fileno=sock.detach())
    plain.settimeout(timeout)
    try:
        return context.wrap_socket(plain, server_hostname=address.host)
    except OSError:
        plain.close()
        raise


class Connection:
    """One socket to Redis. Every failure to reach or hear from the server is BusUnavailable."""

    def __init__(self, address: Address, timeout: float) -> None:
        if not address.service:
            self._open(address, timeout, primary_only=False)
            return
        from bus.sentinel import primary  # only sentinel URLs pay for it

        try:
            self._open(primary(address, timeout), timeout, primary_only=True)
        except BusUnavailable:  # a failover under way: the sentinels may name another server now
            self._open(primary(address, timeout), timeout, primary_only=True)

    def _open(self, address: Address, timeout: float, primary_only: bool) -> None:
        """Connect to `address` and log in; with `primary_only`, make sure it takes writes (not a replica
        that a failover has not reached yet)."""
        self.address = address
        try:
            sock = _connect(address, timeout)
        except OSError as e:
            raise BusUnavailable(f"cannot reach Redis at {self._where()}: {e}") from e
        self._sock, self._timeout = sock, timeout
        self._buf = b""
        hello: list[tuple[str | bytes | int | float, ...]] = []
        if address.password:
            auth = (address.username, address.password) if address.username else (address.password,)
            hello.append(("AUTH", *auth))
        if address.db:
            hello.append(("SELECT", address.db))
        if primary_only:
            hello.append(("ROLE",))
        if not hello:  # a Redis that wants a password says so now (NOAUTH), before anything is sent
            hello.append(("PING",))
        try:
            replies = self.pipeline(hello)
        except BusError:
            self.close()
            raise
        for reply in replies:
            if isinstance(reply, ServerError):
                self.close()
                raise BusUnavailable(f"Redis at {self._where()} refused us: {reply}")
        role = replies[-1]
        if primary_only and not (isinstance(role, list) and role and role[0] == b"master"):
            self.close()
            raise BusUnavailable(f"Redis at {self._where()} is not the primary (a failover is under way)")

    def _where(self) -> str:
        a = self.address
        return a.path or f"{a.host}:{a.port}"

    def call(self, *args: str | bytes | int | float) -> Reply:
        (reply,) = self.pipeline([args])
        if isinstance(reply, ServerError):
            raise reply
        return reply

    def pipeline(
        self, commands: list[tuple[str | bytes | int | float, ...]], patience: float = 0.0
    ) -> list[Reply]:
        """Send every command at once, then read one reply each (error replies are returned, not raised).
        `patience`: seconds the server may take on top of the timeout (a `WAIT` among the commands)."""
        if not commands:
            return []
        try:
            if patience:
                self._sock.settimeout(self._timeout + patience)
            self._sock.sendall(b"".join(encode_command(*c) for c in commands))
            replies = [self._read() for _ in commands]
            if patience:
                self._sock.settimeout(self._timeout)
        except OSError as e:
            raise BusUnavailable(f"lost Redis at {self._where()}: {e}") from e
        for reply in replies:
            if isinstance(reply, ServerError) and refusal(reply):
                raise BusRefused(
                    f"IB_REDIS_URL: Redis at {self._where()} refused us: {reply}; "
                    "check the user, password and database in the URL"
                )
        return replies

    def _read(self) -> Reply:
        while True:
            parsed = parse_reply(self._buf) if self._buf else None
            if parsed is not None:
                reply, used = parsed
                self._buf = self._buf[used:]
                return reply
            chunk = self._sock.recv(65536)
            if not chunk:
                raise OSError("connection closed")
            self._buf += chunk

    def close(self) -> None:
        try:  # noqa: SIM105 - contextlib costs 4 ms to import on this hot path
            self._sock.close()
        except OSError:
            pass

    def __enter__(self) -> Connection:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
