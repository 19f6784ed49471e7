"""Hooks that found no relay wait in their agent's queue folder for the worker.

A boxed agent's hooks (Codex CLI's, Gemini CLI's) reach the bus only through the worker's relay. While no
worker runs, a hook that cannot reach it writes its request, as the relay would have read it, to a file
in the agent's own queue folder (`IB_RELAY_QUEUE`, the one place of `.ib/` the box lets it write), and
exits 0 at once. The worker, once it runs, replays each file as that agent, oldest first, and deletes it.

The folder names the agent (the box binds only the agent's own), never the file: what an agent writes
there runs with its own rights, as a relayed hook would. Only hooks are replayed. Hot: stdlib only.
"""

from __future__ import annotations

import os
import shutil
import stat
import time

from worker.boundary.relay_wire import MAX_LINE

MAX_QUEUED = 500  # a folder this full takes no more: an agent cannot fill the disk through it
MAX_REQUEST = MAX_LINE + 1  # a request line and its newline
SUFFIX = ".req"


def put(folder: str, line: bytes, max_queued: int = MAX_QUEUED) -> str:
    """Write request `line` to a new file in `folder` (whole or not at all); its path. Raises OSError
    when it cannot, or when the folder is full."""
    if sum(1 for name in os.listdir(folder) if name.endswith(SUFFIX)) >= max_queued:
        raise OSError(f"{folder} holds {max_queued} hooks already")
    name = f"{time.time_ns():020d}-{os.getpid()}"
    partial = os.path.join(folder, f".{name}.part")
    with open(partial, "wb") as f:
        f.write(line)
    path = os.path.join(folder, name + SUFFIX)
    os.rename(partial, path)
    return path


def queued(folder: str) -> list[str]:
    """The files waiting in `folder`, oldest first ([] when it does not exist)."""
    try:
        names = os.listdir(folder)
    except FileNotFoundError:
        return []
    return [os.path.join(folder, name) for name in sorted(names) if name.endswith(SUFFIX)]


def read(path: str) -> bytes | None:
    """The request in `path`; None when it is not a regular file of a request's size (the agent writes the
    folder: a link, a pipe, a device or a folder there is never read, only removed)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    found = os.fstat(fd)
    if not stat.S_ISREG(found.st_mode) or found.st_size > MAX_REQUEST:
        os.close(fd)
        return None
    with os.fdopen(fd, "rb") as f:
        return f.read(MAX_REQUEST)


def remove(path: str) -> None:
    """`path` gone, whatever it is (never following a link)."""
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path, ignore_errors=True)
        return
    try:
        os.unlink(path)
    except FileNotFoundError:
        return
