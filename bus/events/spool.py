"""The spool: events kept in a local append-only JSONL file while Redis cannot be reached.

One file per user and bus (target + namespace), mode 0600. Each record is one line, appended whole under
an exclusive lock and fsync'd, or cut back off when the disk fills half way, so a record is there whole or
not at all; a line left cut short by a crash is ended before the next record, which then stays readable.
A flush publishes every line in order through the publish-once script, keyed by the event's client-made
id (older spools: by the line's spool id), so a flush retried, or an event whose first send timed out
after landing, is never published twice. When the spool folder cannot be written, a private folder under
the system temp dir takes the event; when neither can, `SpoolUnavailable` says why.
"""

from __future__ import annotations

import fcntl
import os
import zlib

from bus.errors import BusError, BusUnavailable
from bus.events import append_once
from bus.events.envelope import EID_FIELD, Envelope, encode, stamped
from bus.wire import fastjson
from bus.wire.keys import Keys
from bus.wire.record import Record
from bus.wire.resp import Connection, ServerError


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
    event = stamped(event)
    eid = event[EID_FIELD]
    line = fastjson.dumps(
        {"spool_id": eid, "eid": eid, "target": target, "namespace": namespace, "event": encode(event)}
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
    fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        end = os.lseek(fd, 0, os.SEEK_END)
        if end and os.pread(fd, 1, end - 1) != b"\n":
            data = b"\n" + data  # a record cut short by a crash ends here: it must not swallow this one
        try:
            _write_all(fd, data, path)
            os.fsync(fd)
        except OSError:
            os.ftruncate(fd, end)  # whole or not at all: never leave the start of a record behind
            raise
    finally:
        os.close(fd)
    if not end:
        _sync_folder(folder)
    return path


def _write_all(fd: int, data: bytes, path: str) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        if not written:
            raise OSError(f"short write to {path} (disk full?)")
        view = view[written:]


def _sync_folder(folder: str) -> None:
    """A new spool file's name reaches the disk too, not only its content."""
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    except OSError:
        pass  # some file systems cannot sync a folder; the record itself is synced
    finally:
        os.close(fd)


def _private_folder(folder: str) -> None:
    """The fallback lives in a shared folder: use it only when it is ours and nobody else can enter it."""
    import stat

    os.makedirs(folder, mode=0o700, exist_ok=True)
    info = os.lstat(folder)
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o077:
        raise OSError(f"{folder} is not a private folder of this user")


def flush(
    conn: Connection, spool_dir: str, target: str, namespace: str, maxlen: int, wait: tuple[int, int] = (0, 0)
) -> int:
    """Publish what waits for this bus (spool folder, then fallback), in order; how many were sent now.
    `wait`: (replicas, ms) that must hold the events before they leave the spool (`WAIT`)."""
    return sum(flush_file(conn, d, target, namespace, maxlen, wait) for d in spool_dirs(spool_dir))


def flush_file(
    conn: Connection, spool_dir: str, target: str, namespace: str, maxlen: int, wait: tuple[int, int] = (0, 0)
) -> int:
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
        published = _publish_lines(conn, lines, namespace, maxlen, path, wait)
        os.ftruncate(fd, 0)
        return published
    finally:
        os.close(fd)


def _publish_lines(
    conn: Connection, lines: list[bytes], namespace: str, maxlen: int, path: str, wait: tuple[int, int]
) -> int:
    keys = Keys(namespace)
    commands: list[tuple[str | bytes | int | float, ...]] = []
    damaged: list[bytes] = []
    for raw in lines:
        if not raw:
            continue
        try:
            item = fastjson.loads(raw.decode("utf-8"))
            spool_id, body, eid = str(item["spool_id"]), str(item["event"]), item.get("eid")
        except (ValueError, KeyError, TypeError, AttributeError):
            damaged.append(raw)  # a line cut short by a crash: keep it aside, never drop it silently
            continue
        mark = keys.published(eid) if isinstance(eid, str) and eid else keys.spooled(spool_id)
        commands.append(append_once.command(namespace, mark, body, maxlen))
    if damaged:
        try:
            _keep_aside(path + ".damaged", b"\n".join(damaged) + b"\n")
        except OSError as e:  # the spool stays as it is until there is room: nothing is dropped
            raise BusError(f"cannot keep the damaged lines of {path} aside: {e.strerror or e}") from e
    replicas, wait_ms = wait
    if commands and replicas:
        commands.append(("WAIT", replicas, wait_ms))
    replies = conn.pipeline(commands, wait_ms / 1000 if commands and replicas else 0.0)
    if commands and replicas:
        confirmed = append_once.confirmed_again(conn, replies.pop(), replicas, wait_ms)
        append_once.replicated(confirmed, replicas, wait_ms)  # else the spool keeps them: sent again once
    for reply in replies:
        if isinstance(reply, ServerError):
            raise BusError(f"flushing the spool {path} failed: {reply}")
    return sum(1 for r in replies if append_once.outcome(r)[1])


def _keep_aside(path: str, data: bytes) -> None:
    """Damaged lines go beside the spool, as private as it is."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        _write_all(fd, data, path)
    finally:
        os.close(fd)


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
                if raw == b"\n":
                    continue
                try:
                    item = fastjson.loads(raw.decode("utf-8"))
                    target, namespace = item["target"], item["namespace"]
                    count += 1
                except (ValueError, KeyError, TypeError):
                    damaged += 1
        if count or damaged:
            found.append(SpoolFile(path, target, namespace, count, damaged))
    return found
