"""A Telegram topic written as a terminal screen (ANSI text) for the screenshot painter: the topic's name,
then each message under the bot's name, its text wrapped, and its inline buttons as boxes in rows under
it. Pure: docs.pictures.telegram_topic collects the messages and paints the screen.
"""

from __future__ import annotations

import textwrap
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

from rich.cells import cell_len

BOLD, DIM, RESET = "\x1b[1m", "\x1b[2m", "\x1b[0m"
AUTHOR = "\x1b[1;36m"  # bold cyan, as Telegram's dark theme names the sender in colour
BUTTON = "\x1b[30;47m"  # a button: dark text on a light box
PRESSED = "\x1b[30;42m"  # the one a person tapped
INDENT = "  "


@dataclass(frozen=True)
class Shown:
    """One message as a person saw it: its text and its buttons' labels by row (`pressed`: the one tapped)."""

    text: str
    buttons: tuple[tuple[str, ...], ...] = ()
    pressed: str | None = None


def topic_screen(title: str, note: str, messages: Sequence[Shown], author: str, width: int) -> list[str]:
    """The screen's lines: `# title  (note)`, then each message under `author`, a blank line between."""
    lines = [f"{BOLD}# {_plain(title)}{RESET}  {DIM}({_plain(note)}){RESET}"]
    for message in messages:
        lines += ["", f"{AUTHOR}{_plain(author)}{RESET}"]
        lines += [INDENT + line for line in wrapped(message.text, width - len(INDENT))]
        lines += [INDENT + _button_row(row, message.pressed) for row in message.buttons]
    return lines


def wrapped(text: str, width: int) -> list[str]:
    """`text`'s lines cut to `width` cells at spaces where they can be; a cut line keeps its indent."""
    out: list[str] = []
    for line in _plain(text).splitlines() or [""]:
        indent = line[: len(line) - len(line.lstrip(" "))]
        # textwrap counts characters; a wide one (an emoji) takes two cells, so it gets the room it needs
        room = width - (cell_len(line) - len(line))
        out += textwrap.wrap(line, room, subsequent_indent=indent, break_on_hyphens=False) or [""]
    return out


def _button_row(labels: tuple[str, ...], pressed: str | None) -> str:
    return "  ".join(f"{PRESSED if label == pressed else BUTTON} {_plain(label)} {RESET}" for label in labels)


def _plain(text: str) -> str:
    """Text with no escape of its own: a message cannot restyle the screen."""
    return "".join(" " if unicodedata.category(c) == "Cc" and c != "\n" else c for c in text)
