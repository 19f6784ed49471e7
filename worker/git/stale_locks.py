"""Lock files a killed git of ours left in a checkout (`index.lock`, `HEAD.lock`, a branch's `.lock`): told
apart from the lock of a git that still runs, which is never touched.

A lock is ours and stale when it was made after the merge's journal (so by that merge's git), and no live
git process works in the repository (none has its folder, or its git folder, as its current directory:
git changes into the top of the work tree, `-C` included, before it takes a lock). Linux's /proc is read.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger(__name__)

SLACK = 2.0
"""Seconds a lock's time may lie before the journal's and still be the merge's (coarse file times)."""


@dataclass(frozen=True)
class LiveGit:
    pid: int
    folder: str


def live_gits(folders: list[Path], besides: list[Path]) -> list[LiveGit]:
    """Git processes working in any of `folders` (or below them), but not below `besides` (the agents'
    repositories under `.ib/`, whose gits take no lock of the person's). A git whose folder cannot be read
    (another user's) counts as working there: unknown is never stale."""
    inside = [str(f.resolve()) for f in folders]
    apart = [str(f.resolve()) for f in besides]
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry.name}/comm", encoding="utf-8", errors="replace") as f:
                if not f.read().strip().startswith("git"):
                    continue
        except OSError:
            continue
        try:
            cwd = os.readlink(f"/proc/{entry.name}/cwd")
        except FileNotFoundError:
            continue  # it ended while we looked
        except OSError:
            found.append(LiveGit(int(entry.name), "(unreadable)"))
            continue
        if _below(cwd, inside) and not _below(cwd, apart):
            found.append(LiveGit(int(entry.name), cwd))
    return found


def _below(folder: str, roots: list[str]) -> bool:
    return any(folder == root or folder.startswith(root + os.sep) for root in roots)


def clear(
    locks: list[Path], since: float, folders: list[Path], besides: list[Path]
) -> tuple[list[Path], list[LiveGit]]:
    """Remove the `locks` made at or after `since` when no git works in `folders`; what was removed, and the
    live gits that kept them (then nothing is removed). A lock older than `since` is not ours: kept."""
    present = [lock for lock in locks if lock.exists()]
    ours = [lock for lock in present if _mtime(lock) >= since - SLACK]
    if not ours:
        return [], []
    running = live_gits(folders, besides)
    if running:
        return [], running
    for lock in ours:
        lock.unlink(missing_ok=True)
        log.warning("removed %s, left by a git of ittybus killed during a merge", lock)
    return ours, []


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except FileNotFoundError:
        return 0.0
