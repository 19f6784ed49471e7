"""The pure side of tmux's control mode (`tmux -C`): which commands a control client runs in place of a
tmux process, the line that carries them to it, and its replies, read back from output that frames each
command's answer in `%begin` / `%end` (or `%error`) lines among notifications. worker.tmux.control runs
the client."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

READS = frozenset(
    {"capture-pane", "display-message", "has-session", "list-panes", "list-sessions", "list-windows"}
)
"""The commands a control client runs: they only read, so one the client loses half-way runs again in a
tmux process, and the client's own session never becomes their target (see `controllable`)."""
SESSION_PREFIX = "ittybus-control-"
"""The name of a control client's own session (then the pid and a count): not `ib-`, no agent's."""
CLIENT_FLAGS = "ignore-size,no-output"
"""The client's flags: its size sizes no window, and it is sent no pane's output (`%output`)."""


@dataclass(frozen=True, slots=True)
class Reply:
    """One command's answer: `ok` for `%end`, not for `%error`; `text` the lines between, each ending in a
    newline, as a tmux process prints them (its stdout, or for an error its stderr). `ours` when the
    command came from the client's input (flag 1), not from the command line that started it."""

    number: int
    ours: bool
    ok: bool
    text: str


def controllable(command: Sequence[str]) -> bool:
    """Whether a control client runs `command` as a tmux process would: a read with its own target (a
    command without one would default to the client's session) or a listing of the whole server."""
    name, args = command[0], command[1:]
    if name not in READS:
        return False
    if name == "list-sessions" or (name in ("list-panes", "list-windows") and "-a" in args):
        return True
    if name == "display-message" and "-p" not in args:  # without -p it shows on the client's status line
        return False
    return "-t" in args


def control_argument(text: str) -> str:
    """`text` as tmux's command parser reads it back as it is: single-quoted (no `;`, `#`, `~`, `$` or
    `{` is special inside), a single quote closed, escaped and reopened."""
    return "'" + text.replace("'", "'\\''") + "'"


def control_line(commands: Sequence[Sequence[str]]) -> str | None:
    """The line a control client reads as `commands` in order (a failing one stops the rest, as in one
    tmux process), or None when one must run in a tmux process: not a read `controllable` allows, or an
    argument with a line break, which would end the line."""
    if not commands or not all(controllable(command) for command in commands):
        return None
    words = [arg for command in commands for arg in command]
    if any("\n" in word or "\r" in word for word in words):
        return None
    return " ; ".join(" ".join(control_argument(arg) for arg in command) for command in commands)


class ReplyFramer:
    """A control client's output read a line at a time (without its newline). Between replies, lines are
    notifications (`%session-changed`, `%exit`, ...) and are skipped; inside one, every line is output,
    whatever it looks like, until the `%end` or `%error` line that repeats its `%begin`'s time, number
    and flags."""

    def __init__(self) -> None:
        self._guard: str | None = None
        self._lines: list[str] = []

    def feed(self, line: str) -> Reply | None:
        """The reply that `line` ends, else None."""
        if self._guard is None:
            guard = line.removeprefix("%begin ")
            fields = guard.split(" ")
            if guard != line and len(fields) == 3 and all(field.isdigit() for field in fields):
                self._guard, self._lines = guard, []
            return None
        if line not in (f"%end {self._guard}", f"%error {self._guard}"):
            self._lines.append(line)
            return None
        _, number, flags = self._guard.split(" ")
        self._guard = None
        text = "".join(row + "\n" for row in self._lines)
        return Reply(int(number), flags == "1", line.startswith("%end"), text)
