"""ittybus's view of tmux: sessions, pane text, sending text and keys, and the one-call pane listing
the pane watcher polls, each by exact session name. libtmux does the object work (creating, finding,
capturing, killing) through worker.tmux.server, which runs every call; a few calls stay raw tmux where
libtmux has no API for them, each saying why. Argument building and output parsing live in
worker.tmux.parse."""

from __future__ import annotations

import contextlib
import os
import time
import uuid
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Literal

from libtmux import exc
from libtmux.pane import Pane

from worker.errors import SessionGone, TmuxError
from worker.secret_env import secret_names
from worker.tmux.pane_death import DEAD_FORMAT, Death, last_lines, parse_dead
from worker.tmux.parse import (
    PANES_FORMAT,
    PaneInfo,
    capture_text,
    check_environment,
    check_session_name,
    env_arguments,
    format_literal,
    pane_target,
    parse_panes,
    parse_screen,
    parse_sessions,
    paste_bytes,
    session_target,
    typed,
)
from worker.tmux.server import TIMEOUT, TmuxServer, libtmux_error

DRAIN = "exec cat >/dev/null"
"""The command a kept pane's output is piped to (see `_new_remaining_session`): read and dropped."""


class Tmux:
    """One tmux server: the default one (`socket_name=None`) or `tmux -L socket_name`.

    `config_file` is passed as `-f` and only matters to the call that starts the server (tests pass
    /dev/null); `timeout` bounds each tmux call. Sessions are always addressed by exact name (`-t =NAME`):
    tmux would otherwise take `agent-1` to mean `agent-10` when only that one exists. Thread-safe: no
    state besides the names.
    """

    def __init__(
        self, socket_name: str | None = None, *, config_file: str | None = None, timeout: float = TIMEOUT
    ) -> None:
        self.socket_name = socket_name
        self._server = TmuxServer(socket_name, config_file=config_file, timeout=timeout)

    def __repr__(self) -> str:
        return f"Tmux(socket_name={self.socket_name!r})"

    def keep_control(self) -> None:
        """Read through a tmux control client kept open (no tmux process per read) until `close_control`:
        for a long-running process that reads often (`ib mcp`). It attaches to a session of its own that
        tmux destroys when it goes, starts no server, and falls back to a tmux process while none runs."""
        self._server.keep_control()

    def close_control(self) -> None:
        """End the control client, if any: every call runs a tmux process again."""
        self._server.close_control()

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
        directory = format_literal(str(cwd))  # tmux expands formats in -c
        try:
            self._start(name, directory, command, env, width, height, remain_on_exit)
        except SessionGone:  # the server exited as the call reached it (`ib resume` had just killed its last
            # session: "server exited unexpectedly", once beside stress-ng); a new-session starts another
            self._start(name, directory, command, env, width, height, remain_on_exit)

    def _start(
        self,
        name: str,
        directory: str,
        command: str,
        env: Mapping[str, str],
        width: int,
        height: int,
        remain_on_exit: bool,
    ) -> None:
        with self._errors(name):
            if remain_on_exit:
                self._new_remaining_session(name, directory, command, env, width, height)
                return
            # libtmux unsets $TMUX in os.environ for this call (nested tmux): the spawns take the raw path
            self._server.new_session(
                name,
                start_directory=directory,
                window_command=command or None,
                x=width,
                y=height,
                environment=check_environment(env),
            )

    def _new_remaining_session(
        self, name: str, directory: str, command: str, env: Mapping[str, str], width: int, height: int
    ) -> None:
        # raw: libtmux's new_session cannot set remain-on-exit in the same tmux call, and a command that
        # exits at once would end its session before a second call set it. The pipe keeps what the command
        # printed last: tmux 3.3 closes a pane whose program exited without reading what is still in its
        # terminal, unless the pane is piped (it then reads to the end first; 3.4 always does)
        new = ["new-session", "-d", "-s", name, "-x", str(width), "-y", str(height), "-c", directory]
        new += [*env_arguments(env), *([command] if command else [])]
        remain = ["set-option", "-w", "-t", pane_target(name), "remain-on-exit", "on"]
        self._server.run([new, remain, ["pipe-pane", "-t", pane_target(name), DRAIN]])

    def scrub_global_secrets(self) -> list[str]:
        """Unset the ittybus secrets (the bot token, ...) in the server's global environment, which
        every new pane would otherwise inherit and `tmux show-environment -g` would show; the names
        removed. Nothing to do when no server runs."""
        try:
            with self._errors(None):
                names = secret_names(self._server.show_environment())
                for name in names:
                    self._server.unset_environment(name)
        except SessionGone:
            return []
        return names

    def has_session(self, name: str) -> bool:
        """Whether the session exists; False as well when no tmux server runs."""
        with self._errors(name):
            return self._server.has_session(check_session_name(name))

    def kill_session(self, name: str) -> None:
        """Stop the session and every process in it; SessionGone when it is not there."""
        with self._errors(name):
            self._server.kill_session(session_target(check_session_name(name)))

    def sessions(self, prefix: str = "") -> list[str]:
        """The names of the sessions that start with `prefix`; [] when no tmux server runs."""
        # raw: libtmux's Server.sessions lists outside Server.cmd, so with no timeout, and without `-u`,
        # which makes tmux print its field separator as `_` to a client outside a UTF-8 locale
        try:
            with self._errors(None):
                listed = self._server.cmd("list-sessions", "-F", "#{session_name}")
        except SessionGone:
            return []
        return parse_sessions("\n".join(listed.stdout), prefix)

    def kill_server(self) -> None:
        """Stop the server and every session on it, and remove its socket file (tmux 3.3 leaves it in
        /tmp/tmux-UID/). Nothing to do when no server runs."""
        try:
            with self._errors(None):
                socket = self._server.display_message("#{socket_path}", get_text=True)
                self._server.kill()
        except SessionGone:
            return
        if socket and socket[0]:
            Path(socket[0]).unlink(missing_ok=True)

    # -- panes ------------------------------------------------------------------------------------

    def capture(self, name: str, lines: int | None = None, history: bool = False, join: bool = False) -> str:
        """The pane's text, each line ending in a newline, without the empty rows under the last line.

        By default the visible screen; with `lines`, the last `lines` lines counting the scrollback
        above the screen; with `history`, the whole scrollback and the screen. `join` joins the rows a
        long line was wrapped onto. Colours and attributes are left out.
        """
        if lines is not None and lines < 0:
            raise ValueError(f"lines must be 0 or more, not {lines}")
        start: Literal["-"] | int | None = None  # the screen's first row
        if history:
            start = "-"
        elif lines is not None:
            start = -lines  # up to `lines` rows of scrollback above the screen
        with self._errors(name):
            rows = self._pane(name).capture_pane(start, join_wrapped=join)
        return capture_text("\n".join(rows), lines)

    def capture_screen(self, name: str) -> tuple[int, int, str]:
        """(width, height, screen) of the pane: the visible screen with its colours and attributes as
        escape sequences (`capture-pane -e`), and its size, in one tmux call."""
        # raw: libtmux reads the size and the screen in two calls, which a resize can come between;
        # has-session first, as display-message succeeds silently when its target does not exist
        target = pane_target(check_session_name(name))
        size = ["display-message", "-p", "-t", target, "#{pane_width} #{pane_height}"]
        capture = ["capture-pane", "-e", "-p", "-t", target]
        with self._errors(name):
            screen = self._server.run([["has-session", "-t", session_target(name)], size, capture])
        return parse_screen("\n".join(screen.stdout))

    def pane_pid(self, name: str) -> int | None:
        """The pid of the pane's first process (the command, or the shell that runs it); None when it
        has exited and `remain_on_exit` kept the pane. SessionGone when there is no session."""
        # raw: libtmux finds a pane by listing outside Server.cmd (see `sessions`), and tmux 3.3's
        # display-message prints nothing and succeeds when its target does not exist
        with self._errors(name):
            listed = self._pane(name).cmd("list-panes", "-f", "#{pane_active}", "-F", PANES_FORMAT)
        found = parse_panes("\n".join(listed.stdout))
        return found[0].pid if found and not found[0].dead else None

    def death(self, name: str) -> Death:
        """How the pane's program ended and the last lines it printed (the pane kept by remain-on-exit).
        SessionGone when there is no session."""
        target = pane_target(check_session_name(name))
        dead = ["display-message", "-p", "-t", target, DEAD_FORMAT]
        with self._errors(name):
            listed = self._server.run([["has-session", "-t", session_target(name)], dead])
            text = self.capture(name, lines=200)
        status, signal = parse_dead(listed.stdout[0] if listed.stdout else "")
        return Death(status, signal, last_lines(text))

    def panes(self) -> list[PaneInfo]:
        """Every pane of the server in one tmux call: session, pid, dead, current command and the time of
        its last output (see PaneInfo and parse.needs_capture). [] when no tmux server runs."""
        # raw: the pane watcher's one call per tick; libtmux's Server.panes lists every field of every
        # pane, outside Server.cmd (see `sessions`)
        try:
            with self._errors(None):
                listed = self._server.cmd("list-panes", "-a", "-F", PANES_FORMAT)
        except SessionGone:
            return []
        return parse_panes("\n".join(listed.stdout))

    # -- input ------------------------------------------------------------------------------------

    def send_text(
        self, name: str, text: str, enter: bool = True, enter_delay: float = 0.1, paste: bool = False
    ) -> None:
        """Put `text` into the pane's program exactly as it is, then (with `enter`) submit it.

        tmux must never read the text as key names or as its own syntax:

        - one short line without control characters is typed with `send-keys -l -- TEXT`: `-l` sends
          characters, not key names (`Enter`, `C-c`), `--` keeps a leading `-` from being an option,
          and a final `;`, which tmux's command-line parser would take as a command separator and drop,
          is sent escaped as `\\;` (see parse.tmux_argument);
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

        With `paste`, even one short line goes as a paste: a program that reads some typed keys as its
        own commands (Gemini CLI's `?` and `!` in an empty input box) takes a paste as text.
        """
        pane = self._pane(name)
        with self._errors(name):
            if text and typed(text) and not paste:
                # raw: libtmux's send_keys puts no `--` before the text, so a leading `-` would be a flag
                pane.cmd("send-keys", "-l", "--", text)
            elif text:
                self._paste(name, text)
            if enter:
                if text:
                    time.sleep(enter_delay)
                pane.enter()

    def send_keys(self, name: str, *keys: str) -> None:
        """Press named keys in order, as tmux names them: `Escape`, `C-c`, `Enter`, `Up`, `BSpace`..."""
        if not keys:
            raise ValueError("send_keys needs at least one key name")
        with self._errors(name):
            # raw: libtmux's send_keys takes one key per tmux call; a dialog's answer goes in one
            self._pane(name).cmd("send-keys", "--", *keys)

    def _paste(self, name: str, text: str) -> None:
        # raw: libtmux has no way to feed a buffer from stdin, nor to load and paste in one call
        buffer, target = f"ittybus-{uuid.uuid4().hex}", pane_target(name)
        load = ["load-buffer", "-b", buffer, "-"]
        paste = ["paste-buffer", "-p", "-r", "-d", "-b", buffer, "-t", target]
        try:
            self._server.run([load, paste], stdin=paste_bytes(text))
        except exc.LibTmuxException:
            with contextlib.suppress(exc.LibTmuxException):  # the load worked, the paste did not
                self._server.delete_buffer(buffer_name=buffer)
            raise

    # -- libtmux ----------------------------------------------------------------------------------

    def _pane(self, name: str) -> Pane:
        """The session's active pane as a libtmux Pane, addressed by exact session name: built without
        the listing libtmux would run to find it by id, so a capture stays one tmux call."""
        return Pane(server=self._server, pane_id=pane_target(check_session_name(name)))

    @contextlib.contextmanager
    def _errors(self, session: str | None) -> Iterator[None]:
        """libtmux's exceptions as ours, naming the session and the server."""
        try:
            yield
        except exc.LibTmuxException as e:
            raise libtmux_error(e, session, self.socket_name) from e
