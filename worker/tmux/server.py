"""The one place tmux runs: `TmuxServer`, a libtmux `Server` whose `cmd` — the door every libtmux object
(`Session`, `Pane`...) calls tmux through — and our few chained calls share one runner: `tmux -u` with
the server's `-L` / `-f`, an environment without ittybus secrets, a timeout that names the fix, and a
failure raised as `TmuxFailed` instead of returned for each caller to inspect. A long-running process
may `keep_control`: the reads then go to a control client kept open (worker.tmux.control), the rest
and every read it cannot take to a tmux process. `libtmux_error` turns libtmux's exceptions into ours
(worker.errors)."""

from __future__ import annotations

import itertools
import os
import subprocess
from collections.abc import Sequence
from typing import Any

from libtmux import exc
from libtmux.common import tmux_cmd
from libtmux.server import Server

from worker.errors import SessionExists, SessionGone, TmuxError
from worker.secret_env import without_secrets
from worker.tmux.control import ControlClient
from worker.tmux.parse import Failure, command_line, failure, tmux_error

TIMEOUT = 30.0  # a tmux call that takes longer means a stuck server
INSTALL = "tmux is not installed or not on PATH: install tmux 3.3 or newer"


class TmuxFailed(exc.LibTmuxException):
    """A tmux call exited non-zero: its commands and what tmux said. A libtmux exception, so libtmux
    code that handles failures of its own handles this one the same way."""

    def __init__(self, command: str, stderr: str) -> None:
        super().__init__(f"tmux {command}: {' '.join(stderr.split())}")
        self.command = command
        self.stderr = stderr


class TmuxResult(tmux_cmd):
    """A finished call in the shape libtmux reads: `stdout` as lines without the trailing empty ones,
    `stderr` (empty: a failure raised), `returncode`."""

    def __init__(self, cmd: list[str], stdout: str) -> None:  # no super(): tmux_cmd's runs tmux itself
        lines = stdout.split("\n")
        while lines and not lines[-1]:
            lines.pop()
        self.cmd = cmd
        self.stdout = lines
        self.stderr: list[str] = []
        self.returncode = 0


class TmuxServer(Server):
    """The tmux server `tmux -L socket_name` (the default one for None), `-f config_file` passed to the
    call that starts it (tests pass /dev/null)."""

    def __init__(
        self, socket_name: str | None = None, *, config_file: str | None = None, timeout: float = TIMEOUT
    ) -> None:
        super().__init__(socket_name=socket_name, config_file=config_file)
        self.timeout = timeout
        self.base = ["tmux", "-u"]
        if socket_name is not None:
            self.base += ["-L", socket_name]
        if config_file is not None:
            self.base += ["-f", config_file]
        self.control: ControlClient | None = None

    def keep_control(self) -> None:
        """Run the reads through a control client kept open from the next call on (a long-running
        process's choice: a short one would pay its start for nothing)."""
        if self.control is None:
            self.control = ControlClient(self.base, without_secrets(os.environ))

    def close_control(self) -> None:
        """End the control client, if any; calls go back to a tmux process each."""
        control, self.control = self.control, None
        if control is not None:
            control.close()

    def cmd(self, cmd: str, *args: Any, target: str | int | None = None) -> tmux_cmd:
        """libtmux's one door to tmux (every `Session.cmd`, `Pane.cmd`... ends here), run by `run`."""
        command = [cmd, *(["-t", str(target)] if target is not None else []), *(str(arg) for arg in args)]
        return self.run([command])

    def has_session(self, target_session: str, exact: bool = True) -> bool:
        """libtmux reads has-session's exit status, which `cmd` raises: a missing session or server is
        the answer no."""
        try:
            return super().has_session(target_session, exact)
        except TmuxFailed as e:
            if failure(e.stderr) in (Failure.NO_SERVER, Failure.NO_SESSION):
                return False
            raise

    def run(self, commands: Sequence[Sequence[str]], stdin: bytes | None = None) -> TmuxResult:
        """Run the commands in one tmux call, `stdin` fed to it; TmuxFailed when tmux exits non-zero."""
        name = " + ".join(command[0] for command in commands)
        args = [*self.base, *command_line(*commands)]
        if self.control is not None and stdin is None:
            try:
                reply = self.control.run(commands, self.timeout)
            except TimeoutError:
                raise self._stuck(name, commands) from None
            if reply is not None and not reply.ok:
                raise TmuxFailed(name, reply.text)
            if reply is not None:
                return TmuxResult(args, reply.text)
        try:
            done = subprocess.run(
                args,
                input=stdin,
                capture_output=True,
                timeout=self.timeout,
                env=without_secrets(os.environ),  # a server this call starts inherits no secret
                check=False,
            )
        except FileNotFoundError:
            raise TmuxError(INSTALL) from None
        except subprocess.TimeoutExpired:
            raise self._stuck(name, commands) from None
        if done.returncode != 0:
            raise TmuxFailed(name, done.stderr.decode("utf-8", "replace"))
        return TmuxResult(args, done.stdout.decode("utf-8", "replace"))

    def _stuck(self, name: str, commands: Sequence[Sequence[str]]) -> TmuxError:
        return TmuxError(
            f"tmux {name}{_target(commands)} did not answer in {self.timeout:g}s: the tmux server is "
            f"stuck; stop it with `{' '.join(self.base)} kill-server`"
        )


def _target(commands: Sequence[Sequence[str]]) -> str:
    """` -t TARGET` of the first command that has one, for messages."""
    for command in commands:
        for flag, value in itertools.pairwise(command):
            if flag == "-t":
                return f" -t {value}"
    return ""


# libtmux's own exceptions, most specific first: ours, and the message (formatted with about, where, error)
_MAPPED: tuple[tuple[type[exc.LibTmuxException], type[TmuxError], str], ...] = (
    (exc.TmuxSessionExists, SessionExists, "{about} already exists on {where}: stop it first ({error})."),
    (exc.TmuxObjectDoesNotExist, SessionGone, "{about} is gone from {where} ({error}): start it again."),
    (exc.BadSessionName, TmuxError, "{error}: use letters, digits and _ @ + - in a session name"),
    (exc.TmuxCommandNotFound, TmuxError, INSTALL),
    (exc.VersionTooLow, TmuxError, "{error}: install tmux 3.3 or newer"),
    (exc.LibTmuxException, TmuxError, "libtmux failed for {about} on {where}: {error}"),
)


def libtmux_error(error: exc.LibTmuxException, session: str | None, socket_name: str | None) -> TmuxError:
    """Our error for a libtmux one raised while working on `session` (None: the whole server)."""
    if isinstance(error, TmuxFailed):
        return tmux_error(error.command, session, socket_name, error.stderr)
    about = f"tmux session {session!r}" if session is not None else "tmux"
    where = f"the tmux server `-L {socket_name}`" if socket_name else "the default tmux server"
    ours, message = next((ours, message) for kind, ours, message in _MAPPED if isinstance(error, kind))
    return ours(message.format(about=about, where=where, error=error))
