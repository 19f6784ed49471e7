"""A minimal Redis client for the hot paths: RESP2 over one socket, pipelined commands, nothing else.

Hooks run inside an agent's every tool call; importing redis-py costs ~150 ms, this costs ~2 ms.
Encoding and decoding are pure functions; `Connection` is the thin socket shell around them.
Long-running processes use redis-py (`bus.connection.clients`).
"""

from __future__ import annotations

# `_socket` is the C module under `socket`: the Python wrapper imports enum and selectors (~3 ms)
# for features a client of one TCP or unix connection never uses.
import _socket

from bus.errors import BusError, BusUnavailable, ConfigError, FailoverUnderWay
from bus.wire.address import Address

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
        try:
            self._open(primary(address, timeout), timeout, primary_only=True)
        except BusUnavailable:  # a failover under way: the sentinels may name another server now
            self._open(primary(address, timeout), timeout, primary_only=True)

    def _open(self, address: Address, timeout: float, primary_only: bool) -> None:
        """Connect to `address` and log in; with `primary_only`, make sure it takes writes (not a replica
        that a failover has not reached yet). A primary the sentinels named that cannot be reached or is
        not one (yet) is FailoverUnderWay."""
        self.address = address
        gone = FailoverUnderWay if primary_only else BusUnavailable
        try:
            sock = _connect(address, timeout)
        except OSError as e:
            raise gone(f"cannot reach Redis at {self._where()}: {e}") from e
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
            raise FailoverUnderWay(f"Redis at {self._where()} is not the primary (a failover is under way)")

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


# --- Sentinel: the sentinels are asked in turn; one that is down is skipped. None answering is an
# outage (the hooks spool); a service none of them knows is a configuration error.


def primary(address: Address, timeout: float) -> Address:
    """The address of the primary the sentinels of `address` name now, with the URL's credentials and
    database. Raises BusUnavailable when no sentinel answers, ConfigError when none knows the service."""
    unknown_to: list[str] = []
    failures: list[str] = []
    for host, port in address.sentinels:
        where = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
        try:
            with Connection(Address(host=host, port=port, tls=address.tls), timeout) as conn:
                reply = conn.call("SENTINEL", "get-master-addr-by-name", address.service or "")
        except ConfigError:
            raise
        except BusError as e:
            failures.append(f"{where}: {e}")
            continue
        if isinstance(reply, list) and len(reply) == 2 and all(isinstance(r, bytes) for r in reply):
            found_host, found_port = (r.decode() if isinstance(r, bytes) else "" for r in reply)
            return Address(
                host=found_host,
                port=int(found_port),
                username=address.username,
                password=address.password,
                db=address.db,
                tls=address.tls,
            )
        unknown_to.append(where)
    if unknown_to:
        raise ConfigError(
            f"IB_REDIS_URL: the sentinels at {', '.join(unknown_to)} know no service {address.service!r}"
        )
    raise BusUnavailable(f"no sentinel of IB_REDIS_URL answers ({'; '.join(failures)})")
