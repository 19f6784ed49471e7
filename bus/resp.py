"""A minimal Redis client for the hot paths: RESP2 over one socket, pipelined commands, nothing else.

Hooks run inside an agent's every tool call; importing redis-py costs ~150 ms, this costs ~2 ms.
Encoding and decoding are pure functions; `Connection` is the thin socket shell around them.
Long-running processes use redis-py (`bus.connect`).
"""

from __future__ import annotations

import socket
from typing import TYPE_CHECKING, NamedTuple
from urllib.parse import unquote, urlsplit

from bus.errors import BusError, BusUnavailable, ConfigError

if TYPE_CHECKING:
    from typing import TypeAlias


class ServerError(BusError):
    """An error reply from Redis (`-ERR ...`)."""


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


class Address(NamedTuple):
    """Where a Redis listens, from a `redis://` or `unix://` URL."""

    host: str = "127.0.0.1"
    port: int = 6379
    path: str | None = None
    username: str | None = None
    password: str | None = None
    db: int = 0

    @classmethod
    def from_url(cls, url: str) -> Address:
        parts = urlsplit(url)
        user = unquote(parts.username) if parts.username else None
        password = unquote(parts.password) if parts.password else None
        if parts.scheme == "unix":
            db = _query_db(parts.query)
            return cls(path=parts.path, username=user, password=password, db=db)
        if parts.scheme != "redis":
            raise ConfigError(
                f"IB_REDIS_URL: scheme {parts.scheme!r} is not supported; use redis:// or unix://"
            )
        try:
            port = parts.port or 6379
            db = int(parts.path.lstrip("/") or 0)
        except ValueError as e:
            raise ConfigError(f"IB_REDIS_URL: cannot read {url!r}: {e}") from e
        return cls(host=parts.hostname or "127.0.0.1", port=port, username=user, password=password, db=db)


def _query_db(query: str) -> int:
    for pair in query.split("&"):
        name, _, value = pair.partition("=")
        if name == "db" and value.isdigit():
            return int(value)
    return 0


class Connection:
    """One socket to Redis. Every failure to reach or hear from the server is BusUnavailable."""

    def __init__(self, address: Address, timeout: float) -> None:
        self.address = address
        try:
            if address.path:
                sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                sock.settimeout(timeout)
                sock.connect(address.path)
            else:
                sock = socket.create_connection((address.host, address.port), timeout=timeout)
        except OSError as e:
            raise BusUnavailable(f"cannot reach Redis at {self._where()}: {e}") from e
        self._sock = sock
        self._buf = b""
        hello: list[tuple[str | bytes | int | float, ...]] = []
        if address.password:
            auth = (address.username, address.password) if address.username else (address.password,)
            hello.append(("AUTH", *auth))
        if address.db:
            hello.append(("SELECT", address.db))
        for reply in self.pipeline(hello):
            if isinstance(reply, ServerError):
                self.close()
                raise BusUnavailable(f"Redis at {self._where()} refused us: {reply}")

    def _where(self) -> str:
        a = self.address
        return a.path or f"{a.host}:{a.port}"

    def call(self, *args: str | bytes | int | float) -> Reply:
        (reply,) = self.pipeline([args])
        if isinstance(reply, ServerError):
            raise reply
        return reply

    def pipeline(self, commands: list[tuple[str | bytes | int | float, ...]]) -> list[Reply]:
        """Send every command at once, then read one reply each (error replies are returned, not raised)."""
        if not commands:
            return []
        try:
            self._sock.sendall(b"".join(encode_command(*c) for c in commands))
            return [self._read() for _ in commands]
        except OSError as e:
            raise BusUnavailable(f"lost Redis at {self._where()}: {e}") from e

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
