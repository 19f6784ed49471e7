"""How a Claude Code pane is laid out: the conversation, the input box with the status bar under it, and
(in panes 120 columns or wider, after file edits) a diff panel on the right that is cut away so only the
conversation column is read. Pure: pane text in, a Screen out."""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

RECENT_LINES = 5  # "happening right now": the last non-empty lines of the conversation
WINDOW_LINES = 15  # how far back a marker or a rate-limit notice still counts
CHROME_MAX_LINES = 8  # the input box, and the status bar under it, are never taller than this
DIVIDER = "│"
PANEL_MIN_COLUMN = 20  # a divider further left is a box drawn in the conversation, not a panel
PANEL_MIN_SHARE = 0.5  # a panel's divider runs down at least half of the pane's lines
PANEL_MIN_LINES = 8
USER_PROMPT = "❯"
# Lines the current UI prints just above the input box that are not the conversation: the effort
# level, tmux hints. Between them and the conversation lies the blank rest of the pane.
_NOTICE = re.compile(r"^\s+(?:◐ .*· /effort|.*tmux focus-events off)")
RULE_MIN = 8
_QUEUED = re.compile(r"^\s+⎿\s+Queued\b")


@dataclass(frozen=True)
class Line:
    text: str
    from_user: bool  # part of a prompt typed to the agent: quotes of markers there mean nothing


@dataclass(frozen=True)
class Screen:
    lines: tuple[str, ...]  # every line, the diff panel cut away, no trailing spaces
    conversation: tuple[Line, ...]  # above the input box, trailing blank lines dropped
    status_bar: tuple[str, ...]  # the input box and the status lines below it; () when there is none
    has_input_box: bool  # a "❯" line between two rules at the bottom: Claude Code takes input

    @classmethod
    def read(cls, text: str) -> Screen:
        lines = conversation_column([line.replace("\xa0", " ").rstrip() for line in text.splitlines()])
        cut = bottom_chrome_start(lines)
        conversation = list(lines[:cut])
        while conversation and (not conversation[-1] or _NOTICE.search(conversation[-1])):
            conversation.pop()
        chrome = tuple(lines[cut:])
        has_box = any(line.startswith(USER_PROMPT) for line in chrome) and any(
            is_rule(line) for line in chrome
        )
        return cls(tuple(lines), tuple(attribute(conversation)), chrome, has_box)

    def recent(self) -> list[str]:
        """The agent's lines among the last RECENT_LINES non-empty ones (messages queued under a live
        spinner not counted: however long, the spinner above them is still what happens now)."""
        lines = _unqueued([line for line in self.conversation if line.text])
        return [line.text for line in lines[-RECENT_LINES:] if not line.from_user]

    def last_turn(self) -> list[str]:
        """The agent's lines among the recent ones that follow the last prompt typed to it."""
        lines = _unqueued([line for line in self.conversation if line.text])[-RECENT_LINES:]
        starts = [index + 1 for index, line in enumerate(lines) if line.from_user]
        return [line.text for line in lines[(starts or [0])[-1] :] if not line.from_user]

    def window(self) -> tuple[Line, ...]:
        return self.conversation[-WINDOW_LINES:]

    def agent_window(self) -> list[str]:
        return [line.text for line in self.window() if not line.from_user]

    def status(self) -> tuple[str, ...]:
        return self.status_bar

    def tail(self, count: int) -> list[str]:
        """The last `count` non-empty lines of the whole screen."""
        return [line for line in self.lines if line.strip()][-count:]


def _unqueued(lines: list[Line]) -> list[Line]:
    """The non-empty lines without the messages queued at the bottom (each a prompt block that ends in
    "⎿  Queued · ctrl+x ctrl+s to send now"), which the agent has not taken yet."""
    end = len(lines)
    while end and lines[end - 1].from_user and _QUEUED.search(lines[end - 1].text):
        start = end - 1
        while start and not lines[start].text.startswith(USER_PROMPT):
            start -= 1
        if not lines[start].text.startswith(USER_PROMPT):
            break
        end = start
    return lines[:end]


def is_rule(line: str) -> bool:
    stripped = line.strip()
    return len(stripped) >= RULE_MIN and set(stripped) <= {"─"}


def conversation_column(lines: Sequence[str]) -> list[str]:
    """The lines with a right-hand panel cut away: when a column holds a "│" on at least half of the
    lines (the leftmost such column), every line that has the divider there is cut just before it."""
    column = _panel_column(lines)
    if column is None:
        return list(lines)
    return [_cut_at(line, column).rstrip() for line in lines]


def _panel_column(lines: Sequence[str]) -> int | None:
    counts: Counter[int] = Counter()
    for line in lines:
        counts.update({col for col, char in _columns(line) if char == DIVIDER and col >= PANEL_MIN_COLUMN})
    needed = max(PANEL_MIN_LINES, PANEL_MIN_SHARE * len(lines))
    # the leftmost: a rule further right is inside the panel (a side-by-side diff), not its border
    return min((column for column, count in counts.items() if count >= needed), default=None)


def _cut_at(line: str, column: int) -> str:
    for col, char in _columns(line):
        if col == column and char == DIVIDER:
            return line[: _index_at(line, column)]
        if col > column:
            break
    return line


def _index_at(line: str, column: int) -> int:
    return next(index for index, (col, _) in enumerate(_columns(line)) if col == column)


def _columns(line: str) -> Iterable[tuple[int, str]]:
    """(display column, character) for each character: wide characters take two columns."""
    col = 0
    for char in line:
        yield col, char
        col += 2 if unicodedata.east_asian_width(char) in "WF" else 0 if unicodedata.combining(char) else 1


def bottom_chrome_start(lines: Sequence[str]) -> int:
    """Index where the input box (rule, "❯ ...", rule) and the status bar begin; len(lines) if the
    capture has none."""
    rules = [index for index, line in enumerate(lines) if is_rule(line) and not line.startswith(" ")]
    if not rules or sum(1 for line in lines[rules[-1] + 1 :] if line) > CHROME_MAX_LINES:
        return len(lines)
    input_box = rules[-2:]  # the rules above and below the "❯ ..." line, when the box is there
    if len(input_box) == 2 and input_box[1] - input_box[0] <= CHROME_MAX_LINES:
        return input_box[0] if lines[input_box[0] + 1].startswith(USER_PROMPT) else input_box[1]
    return rules[-1]


def attribute(lines: Iterable[str]) -> Iterable[Line]:
    """Mark the lines of each prompt: a "❯" at the left edge opens one; indented and blank lines
    continue whatever block is open; any other line at the left edge opens an agent block."""
    from_user = False
    for text in lines:
        if text and not text[0].isspace():
            from_user = text.startswith(USER_PROMPT)
        yield Line(text, from_user)
