"""The spool: events kept in a local append-only JSONL file while Redis cannot be reached.

One file per user and bus (target + namespace). Producers append under a shared lock; a flush takes the
exclusive lock, publishes every line in order through a Lua script that marks each spool id as sent
(so a flush interrupted half way and retried never publishes an event twice), then empties the file.
When the spool folder cannot be written, a private folder under the system temp dir takes the event;
when neither can, `SpoolUnavailable` says why and the caller tells the person.
"""

from __future__ import annotations

import fcntl
import os
import zlib

from bus import fastjson
from bus.envelope import Envelope, encode
from bus.errors import BusError, BusUnavailable
from bus.keys import Keys
from bus.record import Record
from bus.resp import Connection, ServerError

MARKER_TTL = 7 * 24 * 3600
_SCRIPT: str | None = None


class SpoolUnavailable(BusUnavailable):
    """Redis is away and no spool folder can be written: the event could not be kept."""


class SpoolFile(Record):
    __slots__ = ("damaged", "events", "namespace", "path", "target")

    def __init__(self, path: str, target: str, namespace: str, events: int, damaged: int) -> None:
        self.path, self.target, self.namespace, self.events, self.damaged = (
            path,
            target,
            namespace,
            events,
            damaged,
        )


def spool_path(spool_dir: str, target: str, namespace: str) -> str:
    label = f"{target}|{namespace}"
    readable = "".join(c if c.isalnum() or c in "-_." else "_" for c in label)
    name = readable[:120] + f"-{zlib.crc32(label.encode()):08x}.jsonl"
    return os.path.join(spool_dir, name)


def fallback_dir() -> str:
    """This user's private spool folder under the system temp dir, for when the spool folder is unusable."""
    return os.path.join(os.environ.get("TMPDIR") or "/tmp", f"ittybus-spool-{os.getuid()}")


def spool_dirs(spool_dir: str) -> list[str]:
    """Where events of this user may wait: the spool folder, then the fallback."""
    return [spool_dir, fallback_dir()]


def append(spool_dir: str, target: str, namespace: str, event: Envelope) -> str:
    """Keep `event` for later; returns the spool file's path. Raises SpoolUnavailable when nothing is
    writable."""
    line = fastjson.dumps(
        {"spool_id": os.urandom(12).hex(), "target": target, "namespace": namespace, "event": encode(event)}
    )
    data = (line + "\n").encode("utf-8")
    try:
        return _append_in(spool_dir, target, namespace, data)
    except OSError as e:
        first = f"{spool_dir}: {e.strerror or e}"
    fallback = fallback_dir()
    try:
        _private_folder(fallback)
        return _append_in(fallback, target, namespace, data)
    except OSError as e:
        raise SpoolUnavailable(f"cannot spool the event ({first}; {fallback}: {e.strerror or e})") from e


def _append_in(folder: str, target: str, namespace: str, data: bytes) -> str:
    os.makedirs(folder, mode=0o700, exist_ok=True)
    path = spool_path(folder, target, namespace)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_SH)
        if os.write(fd, data) != len(data):
            raise OSError(f"short write to {path} (disk full?)")
    finally:
        os.close(fd)
    return path


def _private_folder(folder: str) -> None:
    """The fallback lives in a shared folder: use it only when it is ours and nobody else can enter it."""
    import stat

    os.makedirs(folder, mode=0o700, exist_ok=True)
    info = os.lstat(folder)
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o077:
        raise OSError(f"{folder} is not a private folder of this user")


def flush(conn: Connection, spool_dir: str, target: str, namespace: str, maxlen: int) -> int:
    """Publish what waits for this bus (spool folder, then fallback), in order; how many were sent now."""
    return sum(flush_file(conn, d, target, namespace, maxlen) for d in spool_dirs(spool_dir))


def flush_file(conn: Connection, spool_dir: str, target: str, namespace: str, maxlen: int) -> int:
    """Publish what waits for this bus in one folder, in order; returns how many were published now."""
    path = spool_path(spool_dir, target, namespace)
    if not os.path.exists(path):
        return 0
    try:
        fd = os.open(path, os.O_RDWR)
    except FileNotFoundError:
        return 0
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        with os.fdopen(os.dup(fd), "rb") as f:
            lines = f.read().splitlines()
        published = _publish_lines(conn, lines, namespace, maxlen, path)
        os.ftruncate(fd, 0)
        return published
    finally:
        os.close(fd)


def _publish_lines(conn: Connection, lines: list[bytes], namespace: str, maxlen: int, path: str) -> int:
    keys = Keys(namespace)
    commands: list[tuple[str | bytes | int | float, ...]] = []
    damaged: list[bytes] = []
    for raw in lines:
        try:
            item = fastjson.loads(raw.decode("utf-8"))
            spool_id, body = str(item["spool_id"]), str(item["event"])
        except (ValueError, KeyError, TypeError):
            damaged.append(raw)  # a line cut short by a crash: keep it aside, never drop it silently
            continue
        commands.append(("EVAL", _script(), 2, keys.events, keys.spooled(spool_id), maxlen, body, MARKER_TTL))
    if damaged:
        with open(path + ".damaged", "ab") as bad:
            bad.write(b"\n".join(damaged) + b"\n")
    replies = conn.pipeline(commands)
    for reply in replies:
        if isinstance(reply, ServerError):
            raise BusError(f"flushing the spool {path} failed: {reply}")
    return sum(1 for r in replies if r is not None)


def _script() -> str:
    global _SCRIPT  # noqa: PLW0603 - read once per process, hot path
    if _SCRIPT is None:
        with open(os.path.join(os.path.dirname(__file__), "lua", "spool_flush.lua"), encoding="utf-8") as f:
            _SCRIPT = f.read()
    return _SCRIPT


def pending(spool_dir: str) -> list[SpoolFile]:
    """Every spool file of this user that holds something (spool folder and fallback)."""
    paths: list[str] = []
    for folder in spool_dirs(spool_dir):
        try:
            paths += [os.path.join(folder, n) for n in sorted(os.listdir(folder)) if n.endswith(".jsonl")]
        except OSError:
            continue
    found = []
    for path in paths:
        target = namespace = ""
        count = damaged = 0
        with open(path, "rb") as f:
            for raw in f:
                try:
                    item = fastjson.loads(raw.decode("utf-8"))
                    target, namespace = item["target"], item["namespace"]
                    count += 1
                except (ValueError, KeyError, TypeError):
                    damaged += 1
        if count or damaged:
            found.append(SpoolFile(path, target, namespace, count, damaged))
    return found
