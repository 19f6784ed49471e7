"""The state of a Claude Code agent read from the text of its tmux pane: the markers the agent ends a
turn with, the screen's layout (conversation, input box, status bar) and the indicators of work in
progress, checked in a fixed order. Pure: text in, PaneState out."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum

from worker.agents.markers import COMPLETION_MARKER, WAITING_MARKER

RECENT_LINES = 5  # "happening right now": the last non-empty lines of the conversation
WINDOW_LINES = 15  # how far back a marker or a rate-limit notice still counts
_CHROME_MAX_LINES = 8  # the input box, and the status bar under it, are never taller than this


class PaneState(StrEnum):
    CREATING = "creating"
    RUNNING = "running"
    COMPACTING = "compacting"
    WAITING = "waiting"
    COMPLETE = "complete"
    RATE_LIMITED = "rate_limited"
    STOPPED = "stopped"  # no pane at all: decided by the caller, never by pane_state()
    UNKNOWN = "unknown"


def _patterns(*sources: str) -> tuple[re.Pattern[str], ...]:
    return tuple(re.compile(source) for source in sources)


_SPINNER = "[·✢✳✶✻✽]"  # the glyphs Claude Code cycles through beside its status line

# Claude Code has started once its logo or our task prompt is on screen.
_STARTED = ("Claude Code v", "[USER TASK]")
# Screens Claude Code shows before it is ready: trust / imports dialogs, the bare welcome box.
_STARTUP_SCREENS = _patterns(r"^\s*Enter to confirm · Esc to", r"^│\s*Welcome (?:back|to Claude Code)")

_COMPACTING = _patterns(r"Compacting conversation")
# Something executes at this moment: the status line of a turn, or a tool that has not returned.
_ACTIVE = _patterns(r"(?i)\((?:esc|ctrl\+c) to interrupt\b", r"^\s*⎿\s+Running(?! in the background)")
_RATE_LIMITED = _patterns(
    r"rate_limit_error",
    r"Claude usage limit reached",
    r"You've hit your limit",
    r"^/upgrade to increase your usage limit",
)
# A marker counts only as a line of its own (after a "⏺ " bullet or indentation), in capitals.
_MARKERS = (
    (PaneState.COMPLETE, re.compile(rf"^\s*(?:⏺\s+)?{re.escape(COMPLETION_MARKER)}\s*$")),
    (PaneState.WAITING, re.compile(rf"^\s*(?:⏺\s+)?{WAITING_MARKER}\s*$")),
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

_RULE = re.compile(r"^─{8,}$")
_USER_PROMPT = "❯"


@dataclass(frozen=True)
class _Line:
    text: str
    from_user: bool  # part of a prompt typed to the agent: quotes of markers there mean nothing


@dataclass(frozen=True)
class _Screen:
    conversation: tuple[_Line, ...]  # above the input box, trailing blank lines dropped
    status_bar: tuple[str, ...]  # the input box and the status lines below it

    @classmethod
    def read(cls, text: str) -> _Screen:
        lines = [line.rstrip() for line in text.splitlines()]
        cut = _bottom_chrome_start(lines)
        conversation = lines[:cut]
        while conversation and not conversation[-1]:
            conversation.pop()
        return cls(tuple(_attribute(conversation)), tuple(lines[cut:]))

    def recent(self) -> list[str]:
        """The agent's lines among the last RECENT_LINES non-empty ones."""
        lines = [line for line in self.conversation if line.text]
        return [line.text for line in lines[-RECENT_LINES:] if not line.from_user]

    def window(self) -> tuple[_Line, ...]:
        return self.conversation[-WINDOW_LINES:]

    def agent_window(self) -> list[str]:
        return [line.text for line in self.window() if not line.from_user]

    def status(self) -> tuple[str, ...]:
        return self.status_bar


_Check = tuple[PaneState, Callable[[_Screen], Sequence[str]], tuple[re.Pattern[str], ...]]

# The order of detection: creating, then these, then the latest marker, then the weaker signs of work.
_BEFORE_MARKERS: tuple[_Check, ...] = (
    (PaneState.COMPACTING, _Screen.recent, _COMPACTING),
    (PaneState.RUNNING, _Screen.recent, _ACTIVE),
    (PaneState.RATE_LIMITED, _Screen.agent_window, _RATE_LIMITED),
)
_AFTER_MARKERS: tuple[_Check, ...] = (
    (PaneState.RUNNING, _Screen.agent_window, _BUSY),
    (PaneState.RUNNING, _Screen.status, _STATUS_BAR_BUSY),
)


def pane_state(text: str) -> PaneState:
    """The agent's state from its pane text; never STOPPED (that is the absence of a pane)."""
    if _is_creating(text):
        return PaneState.CREATING
    screen = _Screen.read(text)
    return (
        _first_check(screen, _BEFORE_MARKERS)
        or _last_marker(screen.window())
        or _first_check(screen, _AFTER_MARKERS)
        or PaneState.UNKNOWN
    )


def _first_check(screen: _Screen, checks: Iterable[_Check]) -> PaneState | None:
    return next((state for state, lines, patterns in checks if _matches(patterns, lines(screen))), None)


def _is_creating(text: str) -> bool:
    if any(sign in text for sign in _STARTED):
        return False
    return _matches(_STARTUP_SCREENS, text.splitlines())


def _last_marker(window: Sequence[_Line]) -> PaneState | None:
    """The state the latest marker in the window gives. A prompt after it means the agent has
    resumed work, so the marker is stale: RUNNING."""
    state: PaneState | None = None
    for line in window:
        if line.from_user:
            if state is not None:
                state = PaneState.RUNNING
            continue
        state = next((marked for marked, pattern in _MARKERS if pattern.match(line.text)), state)
    return state


def _bottom_chrome_start(lines: Sequence[str]) -> int:
    """Index where the input box (rule, "❯ ...", rule) and the status bar begin; len(lines) if the
    capture has none."""
    rules = [index for index, line in enumerate(lines) if _RULE.match(line)]
    if not rules or sum(1 for line in lines[rules[-1] + 1 :] if line) > _CHROME_MAX_LINES:
        return len(lines)
    input_box = rules[-2:]  # the rules above and below the "❯ ..." line, when the box is there
    if len(input_box) == 2 and input_box[1] - input_box[0] <= _CHROME_MAX_LINES:
        return input_box[0] if lines[input_box[0] + 1].startswith(_USER_PROMPT) else input_box[1]
    return rules[-1]


def _attribute(lines: Iterable[str]) -> Iterable[_Line]:
    """Mark the lines of each prompt: a "❯" at the left edge opens one; indented and blank lines
    continue whatever block is open; any other line at the left edge opens an agent block."""
    from_user = False
    for text in lines:
        if text and not text[0].isspace():
            from_user = text.startswith(_USER_PROMPT)
        yield _Line(text, from_user)


def _matches(patterns: Iterable[re.Pattern[str]], lines: Sequence[str]) -> bool:
    return any(pattern.search(line) for pattern in patterns for line in lines)
