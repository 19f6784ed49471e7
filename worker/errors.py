"""Exceptions of the worker package: `WorkerError` is the base every worker failure derives from,
so the CLI can turn any of them into one clear line and an exit code. Imports nothing of the worker: a
`GitError` words its own message from git's stderr (`stderr_summary`)."""

from __future__ import annotations


def stderr_summary(stderr: str) -> str:
    """The part of git's stderr worth one line: its `fatal:` / `error:` / `CONFLICT` lines, else the last line
    that is not a hint."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    key = [line for line in lines if line.startswith(("fatal:", "error:", "CONFLICT"))]
    if key:
        return "; ".join(key)
    plain = [line for line in lines if not line.startswith("hint:")]
    return plain[-1] if plain else ""


class WorkerError(Exception):
    """Base of every error the worker raises on purpose; the message names the value and the fix."""


class StatusFileError(WorkerError):
    """The status block could not be written to CLAUDE.md (read-only file or folder, disk full, ...)."""


class GitError(WorkerError):
    """A git command failed or was refused. The message says what failed, what git said (its `fatal:` /
    `error:` lines) and what to do; `command` and the full `stderr` are kept for logs."""

    def __init__(
        self,
        what: str,
        *,
        hint: str = "",
        command: tuple[str, ...] = (),
        stderr: str = "",
        returncode: int | None = None,
    ) -> None:
        said = stderr_summary(stderr).rstrip(".")
        message = what + (f" (git: {said})" if said else "") + "."
        super().__init__(f"{message} {hint}" if hint else message)
        self.command = command
        self.stderr = stderr
        self.returncode = returncode


class TmuxError(WorkerError):
    """A tmux command failed; the message names the session, the tmux server and what to do."""


class SessionGone(TmuxError):
    """The tmux session is not there: it was killed, its program exited, or no tmux server runs."""


class SessionExists(TmuxError):
    """A tmux session of that name is already running on the server."""


class PermissionsConfigError(WorkerError):
    """`permissions.<role>.allow/deny` in a config file has the wrong shape; the message names the key."""


class HooksError(WorkerError):
    """Claude Code's settings file could not be read or written; the message names the file and the fix."""
