"""A random token kept in a file of `.ib/` (0600), so what a person configured with it (an MCP client of
`ib mcp --http`, an open `ib web` page and its cookie) stays valid across restarts; made the first time,
delete the file for a new one. The one reader of such a file: a link, a FIFO or a file that holds no token
is refused (ConfigError, saying which), never followed or waited on."""

from __future__ import annotations

import os
import secrets

from bus.errors import ConfigError

MIN_LENGTH = 32


def kept_token(path: str) -> str:
    """The token in `path`, made first when there is none."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    except FileExistsError:
        return _read(path)
    with os.fdopen(fd, "w", encoding="ascii") as out:
        out.write(secrets.token_urlsafe(MIN_LENGTH) + "\n")
    return _read(path)


def _read(path: str) -> str:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as e:
        raise ConfigError(f"cannot read {path} ({e.strerror})") from e
    with os.fdopen(fd, "rb") as f:
        raw = f.read(256)
    token = raw.decode("ascii", "replace").strip()
    if len(token) < MIN_LENGTH or not token.isascii() or any(c.isspace() for c in token):
        raise ConfigError(f"{path} does not hold a token")
    return token
