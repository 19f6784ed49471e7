"""A task's test command run for an agent: inside bubblewrap, as the agent's own commands are.

The person sets a task's test command, but it runs over files the agent wrote (a `conftest.py`, a
`Makefile`), so when an agent's `ib task done` runs it, it gets the agent's walls: the worktree and a
scratch folder writable, the rest read-only, the repository's `.ib/` and the person's secrets hidden,
no network. `boxed` is pure; `box_for` decides and looks at this machine.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from worker.boundary.identity import agent_caller
from worker.permissions.policy import SECRET_PLACES
from worker.programs.claude.sandbox import sandbox_problem


def boxed(
    command: str,
    worktree: str,
    root: str,
    scratch: str,
    hidden_dirs: Sequence[str],
    hidden_files: Sequence[str],
) -> list[str]:
    """The bwrap command line that runs `command` with `sh -c` in `worktree`, `TMPDIR` at `scratch`."""
    args = ["bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    args += ["--unshare-net", "--unshare-pid", "--die-with-parent", "--new-session"]
    args += ["--tmpfs", f"{root.rstrip('/')}/.ib"]  # state, bus password, other agents: gone
    for folder in hidden_dirs:
        args += ["--tmpfs", folder]
    for file in hidden_files:
        args += ["--ro-bind", "/dev/null", file]
    args += ["--bind", worktree, worktree, "--bind", scratch, scratch, "--setenv", "TMPDIR", scratch]
    return [*args, "--chdir", worktree, "sh", "-c", command]


def hidden_places(home: str) -> tuple[list[str], list[str]]:
    """The person's secret folders and files (worker.permissions.policy.SECRET_PLACES) that exist here."""
    places = [os.path.join(home, p[2:]) if p.startswith("~/") else p for p in SECRET_PLACES]
    return [p for p in places if os.path.isdir(p)], [p for p in places if os.path.isfile(p)]


def box_for(command: str, worktree: str, root: str, scratch: str) -> list[str]:
    """For an agent's `ib`, on a machine where bubblewrap runs: the command line that runs its tests
    inside it; for a person (or without bubblewrap, where the agent's own commands are not boxed
    either): nothing, the command runs as it is."""
    if agent_caller() is None or sandbox_problem() is not None:
        return []
    hidden_dirs, hidden_files = hidden_places(os.path.expanduser("~"))
    return boxed(command, worktree, root, scratch, hidden_dirs, hidden_files)
