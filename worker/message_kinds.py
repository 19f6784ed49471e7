"""The four kinds of a message for the person's primary session, and how `ib send user` tells them from
the text's prefix (`?` question, `!` alert, `COMPLETE:`/`DONE:` complete, else status). Pure."""

from __future__ import annotations

from typing import Literal

MessageKind = Literal["question", "status", "alert", "complete"]

_PREFIXES: tuple[tuple[str, MessageKind], ...] = (
    ("?", "question"),
    ("QUESTION:", "question"),
    ("!", "alert"),
    ("ALERT:", "alert"),
    ("COMPLETE:", "complete"),
    ("DONE:", "complete"),
)


def classify_message(text: str) -> tuple[MessageKind, str]:
    """The kind of an `ib send user` text by its prefix (`?` question, `!` alert, `COMPLETE:`/`DONE:`
    complete, else status) and the text without the prefix and the blanks after it."""
    for prefix, kind in _PREFIXES:
        if text.startswith(prefix):
            return kind, text[len(prefix) :].lstrip()
    return "status", text
