"""Writing the status block into CLAUDE.md on disk: read, splice (`status_block.splice`), and replace the file
atomically only when its bytes change, keeping its mode. A read-only file or folder is a `StatusFileError`."""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

from worker.errors import StatusFileError
from worker.frontends.status_block import splice

ATTEMPTS = 3
"""How often a file that keeps changing under us is read again; the last attempt writes regardless."""


def write_if_changed(path: str | os.PathLike[str], block: str) -> bool:
    """Put `block` into the file at `path` (created when missing) and say whether the file was written.

    The new content goes to a temporary file in the same folder that then replaces the original, so a reader
    never sees half a file. When the person saves the file while we splice, we start again from their version.
    """
    target = Path(os.path.realpath(path))  # a symlinked CLAUDE.md stays a symlink: replace what it points to
    attempt = 1
    while True:
        before = _stat(target)
        document = _read(target) if before is not None else b""
        updated = splice(document, block)
        if before is not None and updated == document:
            return False
        _check_writable(target, before)
        temporary = _write_temporary(target, updated, before)
        if attempt < ATTEMPTS and _fingerprint(_stat(target)) != _fingerprint(before):
            temporary.unlink(missing_ok=True)
            attempt += 1
            continue
        _replace(temporary, target)
        return True


def _stat(target: Path) -> os.stat_result | None:
    try:
        return target.stat()
    except FileNotFoundError:
        return None
    except OSError as e:
        raise StatusFileError(f"Cannot read {target}: {e.strerror}. Check the path given to --file.") from e


def _fingerprint(info: os.stat_result | None) -> tuple[int, int, int] | None:
    return None if info is None else (info.st_ino, info.st_mtime_ns, info.st_size)


def _read(target: Path) -> bytes:
    try:
        return target.read_bytes()
    except OSError as e:
        raise StatusFileError(
            f"Cannot read {target}: {e.strerror}. Make it readable (chmod u+r {target}) or use another file."
        ) from e


def _check_writable(target: Path, info: os.stat_result | None) -> None:
    """Refuse what the person made read-only, even where the replace itself would get through (root, or a
    writable folder: replacing a file never needs write permission on the file)."""
    if info is not None and (not stat.S_IMODE(info.st_mode) & 0o222 or not os.access(target, os.W_OK)):
        raise StatusFileError(
            f"{target} is read-only, so the status block cannot be updated. "
            f"Make it writable (chmod u+w {target}) or point `ib status-node --file` at another file."
        )
    folder = target.parent
    try:
        folder_mode = stat.S_IMODE(folder.stat().st_mode)
    except OSError as e:
        raise StatusFileError(f"Cannot use the folder {folder} of {target}: {e.strerror}.") from e
    if not folder_mode & 0o222 or not os.access(folder, os.W_OK | os.X_OK):
        raise StatusFileError(
            f"The folder {folder} is read-only, so {target.name} cannot be replaced safely. "
            f"Make the folder writable (chmod u+w {folder}) or point `ib status-node --file` elsewhere."
        )


def _write_temporary(target: Path, content: bytes, info: os.stat_result | None) -> Path:
    """A new file next to `target` with `content`, flushed to disk, with the mode and owner of `target`."""
    temporary = target.with_name(f".{target.name}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
    try:
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)  # umask applies to a new file
        try:
            _write_all(fd, content)
            if info is not None:
                os.fchmod(fd, stat.S_IMODE(info.st_mode))
                _keep_owner(fd, info)
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError as e:
        temporary.unlink(missing_ok=True)
        raise StatusFileError(f"Cannot write the status block next to {target}: {e.strerror}.") from e
    return temporary


def _write_all(fd: int, content: bytes) -> None:
    view = memoryview(content)
    while view:
        view = view[os.write(fd, view) :]


def _keep_owner(fd: int, info: os.stat_result) -> None:
    if (info.st_uid, info.st_gid) == (os.getuid(), os.getgid()):
        return
    with contextlib.suppress(OSError):  # only root may give a file away; then the replace makes it ours
        os.fchown(fd, info.st_uid, info.st_gid)


def _replace(temporary: Path, target: Path) -> None:
    try:
        os.replace(temporary, target)
    except OSError as e:
        temporary.unlink(missing_ok=True)
        raise StatusFileError(f"Cannot replace {target}: {e.strerror}.") from e
