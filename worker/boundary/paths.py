"""Path arguments of an agent's `ib` command stay inside the agent's worktree.

Checked at open time, not by name: the file is opened first (a write: its folder, then the name in it
without following a link), and the real path of the opened descriptor (`/proc/self/fd/N`) is what must
lie in the worktree, so a symlink swapped in a moment before leads nowhere. The command then opens
`/proc/self/fd/N`, the very file that was checked.
"""

from __future__ import annotations

import os

from worker.errors import WorkerError

READ, WRITE = "read", "write"


class PathOutside(WorkerError):
    """A path argument of an agent's command leads outside its worktree."""


def inside(path: str, folder: str) -> bool:
    """Whether the real path `path` is `folder` or below it (both already resolved). Pure."""
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def fd_path(fd: int) -> str:
    return f"/proc/self/fd/{fd}"


def open_confined(option: str, path: str, worktree: str, mode: str) -> str:
    """Open `path` for `mode` (READ or WRITE) only when the opened file lies in `worktree`; returns the
    `/proc/self/fd/N` path of the open file (kept open for the rest of the process)."""
    home = os.path.realpath(worktree)
    fd = _open_read(path) if mode == READ else _open_write(option, path, home)
    try:
        real = os.readlink(fd_path(fd))
        if not inside(real, home):
            raise PathOutside(f"{option} {path} leads to {real}, outside the agent's worktree {home}")
        if os.fstat(fd).st_nlink > 1:
            raise PathOutside(f"{option} {path} has other hard links; give a plain file in the worktree")
    except BaseException:
        os.close(fd)
        raise
    return fd_path(fd)


def _open_read(path: str) -> int:
    # non-blocking: a FIFO put there by the agent must not hang ib
    return os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)


def _open_write(option: str, path: str, home: str) -> int:
    folder, name = os.path.split(os.path.abspath(path))
    dir_fd = os.open(folder or "/", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        real_folder = os.readlink(fd_path(dir_fd))
        if not inside(real_folder, home):
            raise PathOutside(f"{option} {path} is in {real_folder}, outside the agent's worktree {home}")
        flags = os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
        return os.open(name, flags, 0o644, dir_fd=dir_fd)
    finally:
        os.close(dir_fd)


def confined(option: str, path: str, worktree: str, mode: str) -> str:
    """`open_confined`, with the reasons it cannot open turned into one line."""
    try:
        return open_confined(option, path, worktree, mode)
    except PathOutside:
        raise
    except OSError as e:
        raise PathOutside(f"cannot open {option} {path}: {e.strerror or e}") from e
