"""Exceptions of the worker package: `WorkerError` is the base every worker failure derives from,
so the CLI can turn any of them into one clear line and an exit code."""

from __future__ import annotations

from worker.git.parse import stderr_summary


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
