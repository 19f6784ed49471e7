"""The pure side of talking to tmux: building argument lists that tmux cannot misread, deciding how a
text is sent, parsing what tmux prints, and turning its error lines into errors that name the fix.
No subprocess or libtmux here; worker.tmux.server runs the commands."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import Enum

from worker.errors import SessionExists, SessionGone, TmuxError

# Between the fields of a `list-panes -F` line: never in a name or a number. tmux prints it as it is
# only to a UTF-8 client (`tmux -u`); to others it prints control characters as `_`.
SEPARATOR = "\x1f"
PANES_FORMAT = SEPARATOR.join(
    ("#{session_name}", "#{pane_pid}", "#{pane_dead}", "#{window_activity}", "#{pane_current_command}")
)
MAX_TYPED_BYTES = 1024  # longer single lines are pasted: one tmux message holds at most ~16 KB
PASTE_MARKERS = ("\x1b[200~", "\x1b[201~")  # what bracketed paste wraps a paste in
_SESSION_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_@+-]*")
_ENV_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True, slots=True)
class PaneInfo:
    """One pane as `list-panes -a` reports it.

    `activity` is tmux's `window_activity`: the unix time, in whole seconds, of the last output of the
    window (one pane per session here, so of the pane). tmux updates it on every output, with or without
    `monitor-activity`. `pid` is the pane's first process; tmux keeps reporting it after the process
    died when `remain-on-exit` kept the pane (`dead` is then True).
    """

    session: str
    pid: int | None
    dead: bool
    command: str
    activity: int


class Failure(Enum):
    """What a tmux error line means for the caller."""

    NO_SERVER = "no server"
    NO_SESSION = "no session"
    DUPLICATE = "duplicate"
    OTHER = "other"


def check_session_name(name: str) -> str:
    """The name, when tmux keeps it as it is; tmux itself would silently turn `.` and `:` into `_`,
    expand `#{...}` formats, and match a target by prefix or pattern."""
    if not _SESSION_NAME.fullmatch(name):
        raise TmuxError(
            f"{name!r} cannot be a tmux session name: use letters, digits and _ @ + - "
            "(tmux rewrites '.' and ':', expands '#', and the name must not be empty)"
        )
    return name


def session_target(name: str) -> str:
    """`-t` for a session: `=` makes tmux match the exact name, never a prefix (`a` would find `ab`)."""
    return "=" + name


def pane_target(name: str) -> str:
    """`-t` for the active pane of the session's current window, by exact session name."""
    return f"={name}:"


def tmux_argument(text: str) -> str:
    """One argument as tmux must receive it to read it back as `text`.

    tmux splits its command line into commands at any argument that ends in `;` and drops that `;`,
    even inside `send-keys -l`; an argument ending in `\\;` is kept with that pair turned into `;`.
    So a final `;` is written `\\;`: tmux strips the `;` and turns the `\\` left at the end back
    into `;`, whatever came before (`a\\;` goes as `a\\\\;`, `;` as `\\;`).
    """
    return text[:-1] + "\\;" if text.endswith(";") else text


def command_line(*commands: Sequence[str]) -> list[str]:
    """tmux's arguments for a sequence of commands run in one call: every argument escaped with
    `tmux_argument`, the commands joined by the bare `;` tmux splits on. A failing command stops
    the ones after it."""
    args: list[str] = []
    for command in commands:
        if args:
            args.append(";")
        args.extend(tmux_argument(arg) for arg in command)
    return args


def format_literal(text: str) -> str:
    """`text` for an option tmux expands formats in (`new-session -c`): `#` is written `##`."""
    return text.replace("#", "##")


def check_environment(env: Mapping[str, str]) -> dict[str, str]:
    """The variables for `new-session -e`, once every key is one a shell could read."""
    for key in env:
        if not _ENV_KEY.fullmatch(key):
            raise TmuxError(f"{key!r} cannot be an environment variable name: use letters, digits and _")
    return dict(env)


def env_arguments(env: Mapping[str, str]) -> list[str]:
    """`-e KEY=VALUE` for each variable, for `new-session`; a key that no shell could read is refused."""
    return [arg for key, value in check_environment(env).items() for arg in ("-e", f"{key}={value}")]


def typed(text: str) -> bool:
    """Whether `text` goes as typed keys (`send-keys -l`) rather than as a paste: one short line
    without control characters. A newline would submit early, a tab or an escape would be a key to
    the program, and a long text would not fit in one tmux message."""
    try:
        size = len(text.encode("utf-8"))
    except UnicodeEncodeError:  # a lone surrogate: only the paste path can carry it (replaced)
        return False
    return size <= MAX_TYPED_BYTES and not any(unicodedata.category(ch) == "Cc" for ch in text)


def paste_bytes(text: str) -> bytes:
    """What goes into the paste buffer: the text in UTF-8 without the bracketed-paste markers, which
    would otherwise end the paste early and let the rest be read as keys."""
    for marker in PASTE_MARKERS:
        text = text.replace(marker, "")
    return text.encode("utf-8", "replace")


def parse_panes(output: str) -> list[PaneInfo]:
    """`list-panes -a -F PANES_FORMAT` output; lines that are not five fields are skipped."""
    panes = []
    for line in output.splitlines():
        fields = line.split(SEPARATOR, 4)
        if len(fields) != 5:
            continue
        session, pid, dead, activity, command = fields
        panes.append(
            PaneInfo(
                session=session,
                pid=int(pid) if pid.isdigit() else None,
                dead=dead == "1",
                command=command,
                activity=int(activity) if activity.isdigit() else 0,
            )
        )
    return panes


def parse_sessions(output: str, prefix: str = "") -> list[str]:
    """`list-sessions -F '#{session_name}'` output: the names that start with `prefix`, in tmux's order."""
    return [name for name in output.splitlines() if name and name.startswith(prefix)]


def capture_text(output: str, lines: int | None = None) -> str:
    """`capture-pane -p` output as text: trailing spaces and the empty rows under the last line
    dropped, then the last `lines` lines when given; every line ends in a newline."""
    rows = [row.rstrip(" ") for row in output.split("\n")]
    while rows and not rows[-1]:
        rows.pop()
    if lines is not None:
        rows = rows[-lines:] if lines > 0 else []
    return "".join(row + "\n" for row in rows)


def parse_screen(output: str) -> tuple[int, int, str]:
    """(width, height, text) from `display-message -p '#{pane_width} #{pane_height}'` chained before
    `capture-pane -e -p`: the first line is the size, the rest the screen with its escape sequences."""
    size, _, screen = output.partition("\n")
    try:
        width, height = (int(part) for part in size.split())
    except ValueError:
        raise TmuxError(f"tmux printed no pane size before the screen: {size[:80]!r}") from None
    return width, height, screen


def needs_capture(activity: int, captured_at: float | None) -> bool:
    """Whether a pane may have printed since it was last captured at `captured_at` (unix time, taken
    before that capture ran). `activity` has whole seconds, so output later in the second of the last
    capture carries the same value: a pane is captured again while its activity is not older than the
    second of the last capture, which costs at most one capture too many after it goes quiet."""
    return captured_at is None or activity >= int(captured_at)


def failure(stderr: str) -> Failure:
    """What tmux's error output means (tmux 3.3 wording)."""
    text = stderr.lower()
    if "no server running" in text or "server exited unexpectedly" in text or "lost server" in text:
        return Failure.NO_SERVER
    if "error connecting to" in text and ("no such file" in text or "connection refused" in text):
        return Failure.NO_SERVER
    if any(f"can't find {what}" in text for what in ("session", "window", "pane")):
        return Failure.NO_SESSION
    if "duplicate session" in text:
        return Failure.DUPLICATE
    return Failure.OTHER


def tmux_error(command: str, session: str | None, socket_name: str | None, stderr: str) -> TmuxError:
    """The error to raise for a failed tmux command: SessionGone when the session or the whole server
    is not there, SessionExists for a duplicate name, TmuxError otherwise; the message names the
    session, the server and the fix."""
    said = " ".join(stderr.split()) or "no error text"
    tmux = f"tmux -L {socket_name}" if socket_name else "tmux"
    where = f"the tmux server `-L {socket_name}`" if socket_name else "the default tmux server"
    about = f"tmux session {session!r}" if session is not None else "tmux"
    kind = failure(stderr)
    if kind is Failure.NO_SERVER:
        return SessionGone(
            f"{about} is gone: {where} is not running (tmux {command}: {said}). "
            "Start the agent again; that starts the server."
        )
    if kind is Failure.NO_SESSION:
        return SessionGone(
            f"{about} is gone from {where} (tmux {command}: {said}): it was killed or its program exited. "
            f"See the live sessions with `{tmux} ls` and start the agent again."
        )
    if kind is Failure.DUPLICATE:
        return SessionExists(
            f"{about} already exists on {where}: stop it first "
            f"(`{tmux} kill-session -t ={session}`) or choose another name."
        )
    return TmuxError(f"tmux {command} failed for {about} on {where}: {said}.")
