"""A dialog read by its shape, not its words: a question above a list of options, one of them marked ❯
(the default), drawn where the input box would be; or a notice that offers keys only ("Enter to stay in
auto mode · shift+Tab to leave … · Esc to cancel"). Pure. worker/tmux/dialogs.py asks it when no dialog
it knows by name is on screen, and for the options of one it knows.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

QUESTION_MARKS = ("?", "？", "؟", "⸮")  # Latin, CJK full-width, Arabic
MAX_AFTER = 3  # lines of text under the options (footers: "Esc to cancel · Tab to amend") a dialog has
CONVERSATION = ("⏺", "●", "⎿", "✻", "✽", "✶", "✳", "✢", "·")  # replies, tool results, spinners: not a dialog

_MARKED = re.compile(r"^(\s*)❯\s*(\S.*?)\s*$")
_NUMBERED = re.compile(r"^(\s*)(?:❯\s*)?(\d{1,2})\.\s+(\S.*?)\s*$")
_RULE = re.compile(r"^\s*[─━▔╌]{3,}\s*$")
_KEY_HINT = re.compile(r"^(Enter|Esc|shift\+Tab|Tab)\s+to\s+(\S.*)$", re.IGNORECASE)
TMUX_KEYS = {"enter": "Enter", "esc": "Escape", "shift+tab": "BTab", "tab": "Tab"}


@dataclass(frozen=True)
class Shape:
    """What the screen shows: the question, the options as drawn (digit or None, label) and the index
    of the ❯-marked one."""

    title: str
    options: tuple[tuple[int | None, str], ...]
    selected: int
    keys: tuple[str, ...] = ()  # for a notice: the tmux key that picks each option


def read_shape(lines: list[str]) -> Shape | None:
    """The dialog `lines` (the bottom of a pane) end with, or None: the last ❯ line must be an option of
    a list of two or more, with nothing but a few footer lines under it (an input box's ❯ is not)."""
    marked = _last_marked(lines)
    if marked is None or not _MARKED.match(lines[marked]) or (marked > 0 and _RULE.match(lines[marked - 1])):
        return None  # no ❯ at all, or the input box (a ❯ right under a rule)
    found = _NUMBERED.match(lines[marked])
    span = _numbered(lines, marked, int(found.group(2))) if found else _aligned(lines, marked)
    if span is None:
        return None
    first, last, options, selected = span
    after = [x.strip() for x in lines[last + 1 :] if x.strip() and not _RULE.match(x)]
    title = _title(lines[:first])
    if len(options) < 2 or len(after) > MAX_AFTER or not title:
        return None
    if title.startswith(CONVERSATION) or any(x.startswith(CONVERSATION) for x in after):
        return None  # a prompt in the conversation (❯ and its wrapped lines), a reply under it
    return Shape(title, tuple(options), selected)


def _last_marked(lines: list[str]) -> int | None:
    for index in range(len(lines) - 1, -1, -1):
        if lines[index].lstrip().startswith("❯"):
            return index
    return None


Span = tuple[int, int, list[tuple[int | None, str]], int]  # first line, last line, options, selected


def _numbered(lines: list[str], marked: int, number: int) -> Span | None:
    """Options 1, 2, ... around the marked one; lines indented under an option (its description, the
    rest of a wrapped label) and rules between options belong to the list."""
    found: dict[int, tuple[int, str]] = {}  # number -> (line index, label)
    head = _NUMBERED.match(lines[marked])
    assert head is not None  # the caller matched it
    indent = len(head.group(1))
    for step in (-1, 1):
        index, expected = marked, number
        while 0 <= index < len(lines):
            option = _NUMBERED.match(lines[index])
            if option and int(option.group(2)) == expected:
                found[expected] = (index, option.group(3))
                expected += step
            elif not _inside(lines[index], indent):
                break
            index += step
    numbers = sorted(found)
    if numbers[0] != 1:
        return None
    options: list[tuple[int | None, str]] = [(n, found[n][1]) for n in numbers]
    return found[numbers[0]][0], found[numbers[-1]][0], options, numbers.index(number)


def _inside(line: str, indent: int) -> bool:
    """A line between two numbered options: a rule, or text indented deeper than the numbers."""
    if _RULE.match(line):
        return True
    text = line.lstrip()
    return bool(text) and len(line) - len(text) > indent + 1 and not text.startswith("❯")


def _aligned(lines: list[str], marked: int) -> Span | None:
    """Unnumbered options: the lines next to the marked one whose text starts in the marked label's
    column (the ❯ and its space are drawn in the margin)."""
    found = _MARKED.match(lines[marked])
    assert found is not None
    column = lines[marked].index(found.group(2))
    first = last = marked
    while first > 0 and _at_column(lines[first - 1], column):
        first -= 1
    while last + 1 < len(lines) and _at_column(lines[last + 1], column):
        last += 1
    labels = [x.strip().removeprefix("❯").strip() for x in lines[first : last + 1]]
    options: list[tuple[int | None, str]] = [(None, label) for label in labels]
    return first, last, options, marked - first


def _at_column(line: str, column: int) -> bool:
    text = line.lstrip()
    return bool(text) and len(line) - len(text) == column and not text.startswith("❯")


def _title(above: list[str]) -> str:
    """The question: the last line ending in a question mark since the rule that opens the dialog, else
    the dialog's first line (its heading)."""
    start = max((i + 1 for i, line in enumerate(above) if _RULE.match(line)), default=0)
    region = [line.strip() for line in above[start:] if line.strip()]
    asked = [line for line in region if line.endswith(QUESTION_MARKS)]
    return asked[-1] if asked else (region[0] if region else "")


def read_key_hints(lines: list[str]) -> Shape | None:
    """A notice whose last paragraph offers only keys, `KEY to WHAT · KEY to WHAT`: each is an option
    (the first, Enter's as a rule, is the default). Claude Code draws key names in English in every
    language it speaks."""
    while lines and not lines[-1].strip():
        lines = lines[:-1]
    start = max((i + 1 for i, line in enumerate(lines) if not line.strip()), default=0)
    hints = [part.strip() for part in " ".join(x.strip() for x in lines[start:]).split(" · ")]
    found = [_KEY_HINT.match(hint) for hint in hints]
    region = lines[max((i + 1 for i, line in enumerate(lines) if _RULE.match(line)), default=0) :]
    if len(found) < 2 or not all(found) or any(x.lstrip().startswith("❯") for x in region):
        return None  # not only key hints, or an input box (❯) under them
    picks = [(m.group(1).casefold(), m.group(2)) for m in found if m]
    title = _title(lines[:start])
    if not title or title.startswith(CONVERSATION):
        return None
    options = tuple((None, label) for _key, label in picks)
    return Shape(title, options, 0, tuple(TMUX_KEYS[key] for key, _label in picks))
