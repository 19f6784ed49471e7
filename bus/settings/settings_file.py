"""The one reader of a file a person writes settings into (the repository's `.env`, `.ib/config.json`).

Only a regular file (a link to one is fine), at most `MAX_BYTES`, UTF-8 text: anything else is refused in
one line naming the file and why, so every command, the hooks, the worker and the bot say the same. It
never waits and never reads past the cap: a FIFO is opened without blocking and refused, a device is
refused before it is read. `/dev/null` in the file's place (how an agent's box hides `.env`) reads as empty.
"""

from __future__ import annotations

import os
import stat

from bus.errors import ConfigError

MAX_BYTES = 1024 * 1024
CAP = "1 MiB"
_KINDS = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def read_text(path: str, cap: int = MAX_BYTES) -> str | None:
    """The file's text with universal newlines; None when there is no file (or a dangling link).
    ConfigError in one line when it is not a regular file, is over `cap` bytes, is not UTF-8 text, or
    cannot be read."""
    try:
        found = os.stat(path)  # before opening: opening some devices does something
    except FileNotFoundError:
        return None
    except OSError as e:
        raise ConfigError(f"{_named(path)} cannot be read ({e.strerror}); fix or remove it") from e
    if _hidden(found):
        return ""
    _check_kind(path, found)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | getattr(os, "O_NOCTTY", 0))
    except FileNotFoundError:
        return None
    except OSError as e:
        raise ConfigError(f"{_named(path)} cannot be read ({e.strerror}); fix or remove it") from e
    try:
        _check_kind(path, os.fstat(fd))  # what was opened, should the name have changed meanwhile
        data = _capped(path, fd, cap)
    finally:
        os.close(fd)
    return _text(path, data).replace("\r\n", "\n").replace("\r", "\n")


def _hidden(found: os.stat_result) -> bool:
    """Whether the file is `/dev/null` itself: an agent's box puts it in the place of `.env`."""
    return stat.S_ISCHR(found.st_mode) and found.st_rdev == os.stat(os.devnull).st_rdev


def _check_kind(path: str, found: os.stat_result) -> None:
    if stat.S_ISREG(found.st_mode):
        return
    kind = next((name for test, name in _KINDS if test(found.st_mode)), "not a regular file")
    raise ConfigError(
        f"{_named(path)} is {kind}, not a regular file: ittybus reads settings only from a regular file; "
        "replace it with one or remove it"
    )


def _capped(path: str, fd: int, cap: int) -> bytes:
    """At most `cap` bytes; ConfigError when the file holds more (said before reading when its size does)."""
    size = os.fstat(fd).st_size
    if size > cap:
        raise _too_big(path, size, cap)
    chunks: list[bytes] = []
    got = 0
    while got <= cap:
        chunk = os.read(fd, cap + 1 - got)
        if not chunk:
            break
        chunks.append(chunk)
        got += len(chunk)
    if got > cap:  # it grew while read
        raise _too_big(path, got, cap)
    return b"".join(chunks)


def _too_big(path: str, size: int, cap: int) -> ConfigError:
    limit = CAP if cap == MAX_BYTES else f"{cap} bytes"
    return ConfigError(
        f"{_named(path)} is {_size(size)}, over the {limit} ittybus reads of a settings file: "
        "keep only the settings in it"
    )


def _size(size: int) -> str:
    if size >= 1024 * 1024:
        return f"{size / (1024 * 1024):.1f} MiB"
    return f"{size} bytes" if size < 1024 else f"{size / 1024:.1f} KiB"


def _text(path: str, data: bytes) -> str:
    nul = data.find(b"\x00")
    if nul >= 0:
        raise ConfigError(
            f"{_named(path)} is binary (a NUL byte at byte {nul}), not text: ittybus reads settings only "
            "from UTF-8 text; write it again as text or remove it"
        )
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ConfigError(
            f"{_named(path)} is not UTF-8 text (byte {e.start} is 0x{data[e.start]:02x}): "
            "save it as UTF-8 or remove it"
        ) from None


def _named(path: str) -> str:
    """The file as a message names it: with where it leads, when it is a link."""
    if os.path.islink(path):
        return f"{path} (a link to {os.path.realpath(path)})"
    return path
