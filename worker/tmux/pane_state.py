"""The state of a Claude Code agent read from the text of its tmux pane: an exited program, a dialog
waiting for a person, the markers the agent ends a turn with, API errors, the indicators of work in
progress, and the idle input box of a finished turn, checked in a fixed order. Reads the current UI
(2.1.332: `●` bullets, "esc to interrupt" in the status bar, the diff panel) and the older ones (`⏺`).
Pure: text in, PaneState out; the screen's layout is worker.tmux.pane_screen's."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from enum import StrEnum

from worker.markers import COMPLETION_MARKER, WAITING_MARKER
from worker.tmux.pane_screen import RECENT_LINES, WINDOW_LINES, Line, Screen

__all__ = ["COMPLETION_MARKER", "RECENT_LINES", "WINDOW_LINES", "PaneState", "pane_state"]

BLANK_PANE_LINES = 10  # a capture of a pane nothing has drawn in yet: its whole height, blank
DIALOG_LINES = 14  # a dialog's options and its footer sit within the last lines of the screen
DIALOG_AFTER_SIGN = 4  # lines of a dialog below its last sign (option, footer) at most


class PaneState(StrEnum):
    CREATING = "creating"
    RUNNING = "running"
    COMPACTING = "compacting"
    WAITING = "waiting"
    COMPLETE = "complete"
    PERMISSION = "permission"  # a dialog waits for a person: permission, folder trust, a question, a plan
    ERROR = "error"  # an API error ended the turn (one Claude Code still retries is RUNNING)
    RATE_LIMITED = "rate_limited"
    STOPPED = "stopped"  # the program exited: "Pane is dead", or a shell prompt where Claude Code was
    UNKNOWN = "unknown"


def _patterns(*sources: str) -> tuple[re.Pattern[str], ...]:
    return tuple(re.compile(source) for source in sources)


_SPINNER = "[·✢✳✶✻✽*]"  # the glyphs Claude Code cycles through beside its status line
_BULLET = "[⏺●]"  # the reply bullet: ⏺ up to 2.1.x, ● in 2.1.332
_BULLET_LINE = re.compile(rf"^{_BULLET}\s")

# Claude Code has started once its logo or our task prompt is on screen.
_STARTED = ("Claude Code v", "[USER TASK]")
# The bare welcome box of older versions, shown before the session is ready.
_WELCOME = _patterns(r"^│\s*Welcome (?:back|to Claude Code)")

_EXITED = _patterns(r"^Pane is dead\b")
_SHELL_PROMPT = re.compile(r"^(?:[\w.-]+@[\w.-]+:\S*\s?|[\w.-]+)?[$#%]$")  # $, me@box:~/repo$, bash-5.2$
# An open dialog: its selected option, its footer, or its question; nothing of the input box below it.
_DIALOG = _patterns(
    r"^\s*❯\s*\d+\.\s",
    r"^\s+❯\s+\S",  # an unnumbered option under the cursor (the input box's ❯ is at the left edge)
    r"^\s*Enter to (?:confirm|select)\b",
    r"Esc to cancel\b",
    r"^\s*Do you want to (?:proceed|create|make|allow|overwrite)\b.*\?$",
)
_COMPACTING = _patterns(r"Compacting conversation")
# Claude Code retrying a failed request: "✻ 429 ... · retrying in 10s · attempt 5/10". The turn goes on
# (and most retries recover): no incident until the error ends the turn.
_RETRYING = re.compile(rf"^\s*{_SPINNER}\s.* · retrying in \d+\s*\w* · attempt \d+/\d+")
# Something executes at this moment: the status line of a turn, or a tool that has not returned.
_ACTIVE = _patterns(
    r"(?i)\((?:esc|ctrl\+c) to interrupt\b",
    r"^\s*⎿\s+Running(?! in the background)",
)
_BASH_COMMAND = re.compile(r"^\s*⎿\s+\$ \S")  # 2.1.332 shows a Bash tool's command under it
_SPINNER_LINE = re.compile(rf"^\s*{_SPINNER}\s")
_STATUS_BAR_ACTIVE = _patterns(r"(?i)(?:^|·)\s*esc to interrupt\b")
_RATE_LIMITED = _patterns(
    r"rate_limit_error",
    r"Claude usage limit reached",
    r"You've hit your limit",
    r"^/upgrade to increase your usage limit",
)
# A turn ended by an API error (the last thing the agent shows).
_TURN_ERROR = _patterns(rf"^\s*(?:{_BULLET}\s+)?API Error:")
_TURN_RATE_LIMITED = _patterns(r"API Error: (?:429\b|Request rejected \(429\))")
# A marker counts only as a line of its own (after a bullet or indentation), in capitals.
_MARKERS = (
    (PaneState.COMPLETE, re.compile(rf"^\s*(?:{_BULLET}\s+)?{re.escape(COMPLETION_MARKER)}\s*$")),
    (PaneState.WAITING, re.compile(rf"^\s*(?:{_BULLET}\s+)?{WAITING_MARKER}\s*$")),
    (PaneState.WAITING, re.compile(r"^\s*⎿\s+Waiting…\s*$")),  # a tool call held for the user
)
# Work still going on that is weaker than _ACTIVE: a marker in the window overrides these.
_BUSY = _patterns(
    r"ctrl\+b ctrl\+b",
    r"Claude is thinking",
    rf"^\s*{_SPINNER}\s+[^()]*(?:…|\.\.\.)$",  # a status line with no summary yet
    rf"^\s*{_SPINNER}\s+.*\(.*[↓↑]\s*[\d.]+k? tokens",  # a status line streaming tokens
)
_STATUS_BAR_BUSY = _patterns(r"·\s+\d+\s+(?:background tasks?|bash(?:es)?|local agents?)\b")
# Signs that the screen is the current UI, whose idle input box means the turn is over (older
# versions drew the same box while still working, so there it proves nothing).
_CURRENT_UI = _patterns(
    r"^\s*●\s",
    r"\? for shortcuts",
    r"← for agents",
    r"\b(?:auto|manual) mode on\b",
    rf"^{_SPINNER} \S+ for \d.* · done \d",
    r"Interrupted · What should Claude do instead\?",
)

_Check = tuple[PaneState, Callable[[Screen], Sequence[str]], tuple[re.Pattern[str], ...]]

# The order of detection after the exited program, creating and dialogs: these, then the latest
# marker, then the weaker signs of work, then the idle input box.
_BEFORE_MARKERS: tuple[_Check, ...] = (
    (PaneState.COMPACTING, Screen.recent, _COMPACTING),
    (PaneState.RUNNING, Screen.recent, _ACTIVE),
    (PaneState.RUNNING, lambda screen: _open_bash_command(screen.recent()), (_BASH_COMMAND,)),
    (PaneState.RUNNING, Screen.status, _STATUS_BAR_ACTIVE),
    (PaneState.RATE_LIMITED, Screen.agent_window, _RATE_LIMITED),
    (PaneState.RATE_LIMITED, Screen.last_turn, _TURN_RATE_LIMITED),
    (PaneState.ERROR, Screen.last_turn, _TURN_ERROR),
)
_AFTER_MARKERS: tuple[_Check, ...] = (
    (PaneState.RUNNING, Screen.agent_window, _BUSY),
    (PaneState.RUNNING, Screen.status, _STATUS_BAR_BUSY),
)


def pane_state(text: str) -> PaneState:
    """The agent's state from its pane text."""
    lines = text.splitlines()
    if len(lines) >= BLANK_PANE_LINES and not text.strip():
        return PaneState.CREATING
    screen = Screen.read(text)
    if _exited(screen):
        return PaneState.STOPPED
    if _dialog_open(screen):
        return PaneState.PERMISSION
    if _is_creating(text):
        return PaneState.CREATING
    if _retrying(screen):
        return PaneState.RUNNING
    idle = _idle(screen)
    return (
        _first_check(screen, _BEFORE_MARKERS)
        or _last_marker(screen.window(), idle)
        or _first_check(screen, _AFTER_MARKERS)
        or (PaneState.WAITING if idle else PaneState.UNKNOWN)
    )


def _first_check(screen: Screen, checks: Iterable[_Check]) -> PaneState | None:
    return next((state for state, lines, patterns in checks if _matches(patterns, lines(screen))), None)


def _open_bash_command(recent: Sequence[str]) -> list[str]:
    """The last `⎿ $ cmd` line while its tool still runs: nothing but the spinner after it (a call
    that was refused or interrupted has its outcome on the next line)."""
    commands = [index for index, line in enumerate(recent) if _BASH_COMMAND.match(line)]
    if not commands or not all(_SPINNER_LINE.match(line) for line in recent[commands[-1] + 1 :]):
        return []
    return [recent[commands[-1]]]


def _exited(screen: Screen) -> bool:
    last = screen.tail(1)
    if not last:
        return False
    return _matches(_EXITED, last) or (not screen.has_input_box and bool(_SHELL_PROMPT.match(last[0])))


def _dialog_open(screen: Screen) -> bool:
    """A dialog's signs among the last lines, and no input box drawn below them."""
    tail = screen.tail(DIALOG_LINES)
    signs = [index for index, line in enumerate(tail) if _matches(_DIALOG, [line])]
    if not signs:
        return False
    below = tail[signs[-1] + 1 :]  # the rest of the dialog: its other options, a wrapped line
    if len(below) > DIALOG_AFTER_SIGN or screen.has_input_box:
        return False
    return not any(line.startswith("❯") or _BULLET_LINE.match(line) for line in below)


def _is_creating(text: str) -> bool:
    if any(sign in text for sign in _STARTED):
        return False
    return _matches(_WELCOME, text.splitlines())


def _retrying(screen: Screen) -> bool:
    return any(_RETRYING.search(line) for line in screen.recent())


def _idle(screen: Screen) -> bool:
    """The current UI's input box with no sign of work on screen: the turn is over. (Called after the
    strong signs of work were ruled out; the weaker ones are checked here.)"""
    return (
        screen.has_input_box
        and _matches(_CURRENT_UI, screen.lines)
        and _first_check(screen, _AFTER_MARKERS) is None
    )


def _last_marker(window: Sequence[Line], idle: bool) -> PaneState | None:
    """The state the latest marker in the window gives. A prompt after it means the agent took a new
    turn: RUNNING while it works, WAITING once the screen is idle again (that turn had no marker)."""
    state: PaneState | None = None
    for line in window:
        if line.from_user:
            if state is not None:
                state = PaneState.WAITING if idle else PaneState.RUNNING
            continue
        state = next((marked for marked, pattern in _MARKERS if pattern.match(line.text)), state)
    return state


def _matches(patterns: Iterable[re.Pattern[str]], lines: Sequence[str]) -> bool:
    return any(pattern.search(line) for pattern in patterns for line in lines)
