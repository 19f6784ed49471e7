"""The bubblewrap box ittybus starts an agent program in: the file system read-only but for the agent's
own places, the repository's `.ib/` and `.env` and the person's credentials hidden, a private /tmp, the
network kept. Gemini CLI runs in it because it has no sandbox of its own on Linux; Codex CLI runs in it
around its own sandbox, which stops writes but not reads."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Sequence

from worker.permissions.policy import SECRET_PLACES
from worker.programs.confinement import Confinement

_PROBE_TIMEOUT = 10.0


def box(
    c: Confinement,
    own: Sequence[str],
    person_home: str,
    words: list[str],
    hidden: Sequence[str] = (),
    kept: Sequence[str] = (),
) -> list[str]:
    """The bubblewrap command line that runs `words` where the agent may write only in its worktree, its
    own repository's git folder (not its config, hooks or info/), its cache, its hooks' queue, the
    program's own folders `own` (its HOME and the like) and a private /tmp. Hidden: the repository's
    `.ib/` (the bus's state and password, the other agents) and `.env`, the person's credentials and the
    places `hidden`, but for the files `kept` in them, shown read-only (a login the program needs). The
    network stays: the model API and the relay are on it. The box's processes see only each other, also a
    program's own sandbox nested inside (Codex CLI 0.169.0's starts there) and the commands it runs
    outside that sandbox once the person approves them. Pure but for asking which secret places exist."""
    # a PID namespace of its own: the person's other processes (the worker, the bot, other agents, the
    # tmux server) and their environment, which may hold the bus's address, out of sight
    proc = ["--unshare-pid", "--proc", "/proc"]
    args = ["bwrap", "--ro-bind", "/", "/", "--dev", "/dev", *proc, "--tmpfs", "/tmp", "--die-with-parent"]
    root = c.root.rstrip("/")
    # the repository stays in sight (read-only, but for an agent without a worktree) when it is under /tmp
    args += ["--bind" if c.worktree == c.root else "--ro-bind", c.root, c.root]
    args += ["--tmpfs", f"{root}/.ib"]
    for place in _ittybus_under_tmp():  # the hooks' `ib` must run in the box: its Python and packages
        args += ["--ro-bind", place, place]
    if os.path.exists(f"{root}/.env"):  # bwrap cannot make a file to mount on in a read-only repository
        args += ["--ro-bind", "/dev/null", f"{root}/.env"]
    if c.bin:
        args += ["--ro-bind", c.bin, c.bin]
    for writable in (c.worktree if c.worktree != c.root else "", c.git_dir, c.cache, *own):
        if writable:
            args += ["--bind", writable, writable]
    if c.queue:  # an agent spawned before its queue existed has none: its hooks then say so, and go on
        args += ["--bind-try", c.queue, c.queue]
    if c.git_dir:
        for name in ("config", "hooks", "info"):
            args += ["--ro-bind-try", f"{c.git_dir}/{name}", f"{c.git_dir}/{name}"]
    places = [os.path.join(person_home, p[2:]) if p.startswith("~/") else p for p in SECRET_PLACES]
    for path in [*places, *c.spool, *hidden]:
        if os.path.isdir(path):
            args += ["--tmpfs", path]
        elif os.path.exists(path):
            args += ["--ro-bind", "/dev/null", path]
    for path in kept:
        args += ["--ro-bind-try", path, path]
    return [*args, "--chdir", c.worktree, "--", *words]


def _ittybus_under_tmp() -> list[str]:
    """The folders of the Python running ittybus (its virtual environment, its base installation) that lie
    under /tmp, which the box replaces with a private one: the program's hooks run `ib` from them."""
    places = {os.path.realpath(p) for p in (sys.prefix, sys.base_prefix)}
    return sorted(p for p in places if p == "/tmp" or p.startswith("/tmp/"))


def unseen_in_box(path: str) -> bool:
    """Whether `path` lies where the box shows an empty folder of its own (under /tmp), outside what it
    binds there from outside (ittybus's own Python)."""
    if not _under(path, "/tmp"):
        return False
    return not any(_under(path, place) for place in _ittybus_under_tmp())


def _under(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def boxed_unfinished(title: str) -> str | None:
    """What keeps agents of a program that only runs in the box (`title`) from starting, or None."""
    problem = bubblewrap_problem()
    return f"{title} agents run under bubblewrap, and {problem}" if problem else None


def bubblewrap_problem() -> str | None:
    """Why bubblewrap cannot confine an agent on this machine; None when it can."""
    if shutil.which("bwrap") is None:
        return "bubblewrap (`bwrap`) is not installed: apt-get install bubblewrap"
    try:
        done = subprocess.run(
            ["bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "true"],
            capture_output=True,
            text=True,
            timeout=_PROBE_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"bubblewrap does not run here: {e}"
    if done.returncode != 0:
        return f"bubblewrap does not run here: {done.stderr.strip() or done.returncode}"
    return None
