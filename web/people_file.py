"""`.ib/web-people`: the people let into the page, readable by the owner alone (0600). `ib web --invite` and
`--revoke` change it under a lock and replace it whole; a running `ib web` reads it again when it changed
(`PeopleWatch`), so a revoked person's next request is refused without a restart."""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import stat
from collections.abc import Iterator

from bus.settings.repo_paths import ensure_state_dir
from web.people import NOBODY, People, PeopleError, parse, text_of

log = logging.getLogger(__name__)

PEOPLE_FILE = "web-people"
MAX_BYTES = 1_000_000


def people_path(root: str) -> str:
    return os.path.join(ensure_state_dir(root), PEOPLE_FILE)


def read_people(path: str) -> People:
    """The people in `path` (nobody when there is no file); PeopleError for one that is unreadable, not a
    regular file, readable by others or not a people file."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        return NOBODY
    except OSError as e:
        raise PeopleError(f"cannot read {path} ({e.strerror}): fix it or delete it") from e
    problem = _mode_problem(path, os.fstat(fd).st_mode)
    if problem:
        os.close(fd)
        raise PeopleError(problem)
    with os.fdopen(fd, "rb") as f:
        raw = f.read(MAX_BYTES + 1)
    if len(raw) > MAX_BYTES:
        raise PeopleError(f"{path} is over {MAX_BYTES} bytes, no people file: delete it")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise PeopleError(f"{path} is not text, no people file: delete it") from e
    return parse(text, path)


def _mode_problem(path: str, mode: int) -> str | None:
    if not stat.S_ISREG(mode):
        return f"{path} is not a regular file: delete it"
    if mode & 0o077:
        return f"{path} may be read by others: chmod 600 {path}"
    return None


@contextlib.contextmanager
def changing(path: str) -> Iterator[People]:
    """The people in `path`, under a lock held while the caller decides what to write (two invitations at
    once lose neither)."""
    fd = os.open(path + ".lock", os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield read_people(path)
    finally:
        os.close(fd)


def write_people(path: str, people: People) -> None:
    """Replace `path` with `people` at once (a reader sees the old file or the new one, never half)."""
    scratch = f"{path}.{os.getpid()}.new"
    with contextlib.suppress(FileNotFoundError):
        os.unlink(scratch)
    fd = os.open(scratch, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(text_of(people))
        out.flush()
        os.fsync(out.fileno())
    os.replace(scratch, path)


class PeopleWatch:
    """The people in the file as it is now, read again whenever it changed (a `stat` per call: a request
    costs microseconds more; its change time moves with a chmod too). A file gone bad lets in the owner
    alone, said once in the log."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.seen: tuple[int, ...] | None = None
        self.people = NOBODY

    def current(self) -> People:
        try:
            info = os.stat(self.path, follow_symlinks=False)
            seen: tuple[int, ...] | None = (info.st_ino, info.st_mtime_ns, info.st_ctime_ns, info.st_size)
        except FileNotFoundError:
            seen = None
        if seen != self.seen:
            self.seen = seen
            try:
                self.people = read_people(self.path)
            except PeopleError as e:
                log.warning("%s; until it is fixed only the owner is let in", e)
                self.people = NOBODY
            else:
                log.info("people let in: %s", ", ".join(self.people.names) or "the owner alone")
        return self.people
