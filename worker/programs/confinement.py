"""Where one agent may work: its worktree, its own repository, `bin/` and cache, and what it must not
touch. Every agent program's sandbox is built from this one description (Claude Code's settings, another
CLI's own sandbox flags, or bubblewrap started by ittybus)."""

from __future__ import annotations

from collections.abc import Iterable

from bus.wire.record import Record


class Confinement(Record):
    """Where one agent lives: its worktree (the root for an agent without one), its own repository's git
    folder (empty for an agent without a worktree), `bin/` and cache folder, the repository, the branches an
    agent without a worktree must not move, the `ib` it runs outside the sandbox, the folder where its
    hooks wait when no worker runs (`queue`, worker.boundary.relay_queue), and the person's spool folders
    (`spool`: every repository's events that waited for a bus), which no agent may read."""

    __slots__ = (
        "bin",
        "cache",
        "git_dir",
        "ib_command",
        "protected_branches",
        "queue",
        "relay",
        "root",
        "spool",
        "worktree",
    )

    def __init__(
        self,
        worktree: str,
        root: str,
        protected_branches: Iterable[str],
        ib_command: str,
        git_dir: str = "",
        bin: str = "",
        cache: str = "",
        relay: str = "",
        queue: str = "",
        spool: Iterable[str] = (),
    ) -> None:
        self.worktree, self.root, self.ib_command = worktree, root, ib_command
        self.protected_branches = tuple(protected_branches)
        self.git_dir, self.bin, self.cache, self.relay, self.queue = git_dir, bin, cache, relay, queue
        self.spool = tuple(spool)
