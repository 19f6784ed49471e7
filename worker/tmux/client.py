"""The one module that runs tmux: sessions, pane text, sending text and keys, and the one-call pane
listing the pane watcher polls. Each method is one `tmux -u [-L NAME]` process (or one chained call);
argument building and output parsing live in worker.tmux.parse."""

from __future__ import annotations

import contextlib
import os
import subprocess
import time
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path

from worker.agents.agent_env import secret_names, without_secrets
from worker.errors import SessionGone, TmuxError
from worker.tmux.parse import (
    PANES_FORMAT,
    PaneInfo,
    capture_text,
    check_session_name,
    command_line,
    env_arguments,
    format_literal,
    pane_target,
    parse_panes,
    parse_screen,
    parse_sessions,
    paste_bytes,
    session_target,
    tmux_error,
    typed,
)

TIMEOUT = 30.0  # a tmux call that takes longer means a stuck server


class Tmux:
    """One tmux server: the default one (`socket_name=None`) or `tmux -L socket_name`.

    `config_file` is passed as `-f` and only matters to the call that starts the server (tests pass
    /dev/null). Sessions are always addressed by exact name (`-t =NAME`): tmux would otherwise take
    `agent-1` to mean `agent-10` when only that one exists. Thread-safe: no state besides the names.
    """

    def __init__(self, socket_name: str | None = None, *, config_file: str | None = None) -> None:
        self.socket_name = socket_name
        self._base = ["tmux", "-u"]
        if socket_name is not None:
            self._base += ["-L", socket_name]
        if config_file is not None:
            self._base += ["-f", config_file]

    def __repr__(self) -> str:
        return f"Tmux(socket_name={self.socket_name!r})"

    # -- sessions ---------------------------------------------------------------------------------

    def new_session(
        self,
        name: str,
        cwd: str | os.PathLike[str],
        command: str,
        env: Mapping[str, str],
        *,
        width: int = 200,
        height: int = 50,
        remain_on_exit: bool = False,
    ) -> None:
        """Start a detached session whose one pane runs `command` (through the default shell; an empty
        command runs the shell) in `cwd`, with `env` set for the session's processes on top of the
        server's global environment (that of the process that started the server).

        With `remain_on_exit` the pane stays, dead, when the command exits, so its last text can still
        be captured and `panes()` reports it dead; otherwise the session ends with the command.
        SessionExists when the name is taken.
        """
        check_session_name(name)
        if not Path(cwd).is_dir():
            raise TmuxError(
                f"tmux session {name!r} cannot start in {str(cwd)!r}: no such folder; create it first"
            )
        new = ["new-session", "-d", "-s", name, "-x", str(width), "-y", str(height)]
        new += ["-c", format_literal(str(cwd)), *env_arguments(env)]
        if command:
            new.append(command)
        commands: list[Sequence[str]] = [new]
        if remain_on_exit:  # same call, so a command that exits at once still leaves its pane
            commands.append(["set-option", "-w", "-t", pane_target(name), "remain-on-exit", "on"])
        self._run(commands, name)

    def scrub_global_secrets(self) -> list[str]:
        """Unset the ittybus secrets (the bot token, ...) in the server's global environment, which
        every new pane would otherwise inherit and `tmux show-environment -g` would show; the names
        removed. Nothing to do when no server runs."""
        try:
            names = secret_names(self._run([["show-environment", "-g"]], None))
            if names:
                self._run([["set-environment", "-g", "-u", name] for name in names], None)
        except SessionGone:
            return []
        return names

    def has_session(self, name: str) -> bool:
        """Whether the session exists; False as well when no tmux server runs."""
        try:
            self._run([["has-session", "-t", session_target(check_session_name(name))]], name)
        except SessionGone:
            return False
        return True

    def kill_session(self, name: str) -> None:
        """Stop the session and every process in it; SessionGone when it is not there."""
        self._run([["kill-session", "-t", session_target(check_session_name(name))]], name)

    def sessions(self, prefix: str = "") -> list[str]:
        """The names of the sessions that start with `prefix`; [] when no tmux server runs."""
        try:
            output = self._run([["list-sessions", "-F", "#{session_name}"]], None)
        except SessionGone:
            return []
        return parse_sessions(output, prefix)

    def kill_server(self) -> None:
        """Stop the server and every session on it, and remove its socket file (tmux 3.3 leaves it in
        /tmp/tmux-UID/). Nothing to do when no server runs."""
        try:
            socket = self._run([["display-message", "-p", "#{socket_path}"]], None).strip()
            self._run([["kill-server"]], None)
        except SessionGone:
            return
        if socket:
            Path(socket).unlink(missing_ok=True)

    # -- panes ------------------------------------------------------------------------------------

    def capture(self, name: str, lines: int | None = None, history: bool = False, join: bool = False) -> str:
        """The pane's text, each line ending in a newline, without the empty rows under the last line.

        By default the visible screen; with `lines`, the last `lines` lines counting the scrollback
        above the screen; with `history`, the whole scrollback and the screen. `join` joins the rows a
        long line was wrapped onto. Colours and attributes are left out.
        """
        if lines is not None and lines < 0:
            raise ValueError(f"lines must be 0 or more, not {lines}")
        args = ["capture-pane", "-p", "-t", pane_target(check_session_name(name))]
        if history:
            args += ["-S", "-"]
        elif lines is not None:
            args += ["-S", str(-lines)]  # up to `lines` rows of scrollback above the screen
        if join:
            args.append("-J")
        return capture_text(self._run([args], name), lines)

    def capture_screen(self, name: str) -> tuple[int, int, str]:
        """(width, height, screen) of the pane: the visible screen with its colours and attributes as
        escape sequences (`capture-pane -e`), and its size, in one tmux call."""
        target = pane_target(check_session_name(name))
        size = ["display-message", "-p", "-t", target, "#{pane_width} #{pane_height}"]
        return parse_screen(
            self._run(
                [
                    ["has-session", "-t", session_target(name)],
                    size,
                    ["capture-pane", "-e", "-p", "-t", target],
                ],
                name,
            )
        )

    def pane_pid(self, name: str) -> int | None:
        """The pid of the pane's first process (the command, or the shell that runs it); None when it
        has exited and `remain_on_exit` kept the pane. SessionGone when there is no session."""
        # list-panes, not display-message: tmux 3.3's display-message prints nothing and succeeds
        # when its target does not exist
        target = pane_target(check_session_name(name))
        output = self._run([["list-panes", "-t", target, "-f", "#{pane_active}", "-F", PANES_FORMAT]], name)
        found = parse_panes(output)
        return found[0].pid if found and not found[0].dead else None

    def panes(self) -> list[PaneInfo]:
        """Every pane of the server in one tmux call: session, pid, dead, current command and the time of
        its last output (see PaneInfo and tmux_parse.needs_capture). [] when no tmux server runs."""
        try:
            output = self._run([["list-panes", "-a", "-F", PANES_FORMAT]], None)
        except SessionGone:
            return []
        return parse_panes(output)

    # -- input ------------------------------------------------------------------------------------

    def send_text(self, name: str, text: str, enter: bool = True, enter_delay: float = 0.1) -> None:
        """Put `text` into the pane's program exactly as it is, then (with `enter`) submit it.

        tmux must never read the text as key names or as its own syntax:

        - one short line without control characters is typed with `send-keys -l -- TEXT`: `-l` sends
          characters, not key names (`Enter`, `C-c`), `--` keeps a leading `-` from being an option,
          and a final `;`, which tmux's command-line parser would take as a command separator and drop,
          is sent escaped as `\\;` (see tmux_parse.tmux_argument);
        - anything else (several lines, tabs or other control characters, more than MAX_TYPED_BYTES) is
          loaded into a uniquely named buffer from stdin and pasted with `paste-buffer -p -r -d`, in
          the same tmux call: stdin has no size limit and no parsing, `-p` wraps it in bracketed-paste
          markers when the program asked for them so it sees one paste rather than keystrokes (a
          newline in it does not submit), `-r` keeps newlines as LF, and `-d` deletes the buffer.

        Enter is a separate `send-keys Enter` after `enter_delay` seconds (the call blocks that long):
        arriving in the same burst as the text, it reaches a program that is still taking the text in
        (Claude Code), which reads it as part of the text rather than as "submit", and the message
        sits unsent in its input box.

        A program that did not turn bracketed paste on gets the pasted text as plain keystrokes, so
        each newline in it submits a line; Claude Code and the fake agent turn it on.
        """
        target = pane_target(check_session_name(name))
        if text and typed(text):
            self._run([["send-keys", "-t", target, "-l", "--", text]], name)
        elif text:
            self._paste(name, target, text)
        if enter:
            if text:
                time.sleep(enter_delay)
            self._run([["send-keys", "-t", target, "Enter"]], name)

    def send_keys(self, name: str, *keys: str) -> None:
        """Press named keys in order, as tmux names them: `Escape`, `C-c`, `Enter`, `Up`, `BSpace`..."""
        if not keys:
            raise ValueError("send_keys needs at least one key name")
        self._run([["send-keys", "-t", pane_target(check_session_name(name)), "--", *keys]], name)

    def _paste(self, name: str, target: str, text: str) -> None:
        buffer = f"ittybus-{uuid.uuid4().hex}"
        load = ["load-buffer", "-b", buffer, "-"]
        paste = ["paste-buffer", "-p", "-r", "-d", "-b", buffer, "-t", target]
        try:
            self._run([load, paste], name, stdin=paste_bytes(text))
        except TmuxError:
            with contextlib.suppress(TmuxError):  # the load worked, the paste did not: drop the text
                self._run([["delete-buffer", "-b", buffer]], name)
            raise

    # -- running tmux -----------------------------------------------------------------------------

    def _run(self, commands: Sequence[Sequence[str]], session: str | None, stdin: bytes | None = None) -> str:
        """Run the commands in one tmux call; its output, or the error its message describes."""
        name = " + ".join(command[0] for command in commands)
        try:
            done = subprocess.run(
                [*self._base, *command_line(*commands)],
                input=stdin,
                capture_output=True,
                timeout=TIMEOUT,
                env=without_secrets(os.environ),  # a server this call starts inherits no secret
                check=False,
            )
        except FileNotFoundError:
            raise TmuxError("tmux is not installed or not on PATH: install tmux 3.3 or newer") from None
        except subprocess.TimeoutExpired:
            raise TmuxError(
                f"tmux {name} for session {session!r} did not answer in {TIMEOUT:.0f}s: the tmux server "
                f"is stuck; stop it with `{' '.join(self._base)} kill-server`"
            ) from None
        if done.returncode != 0:
            raise tmux_error(name, session, self.socket_name, done.stderr.decode("utf-8", "replace"))
        return done.stdout.decode("utf-8", "replace")
