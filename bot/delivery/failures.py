"""What a refusal from the Bot API means for the bot: which Telegram error texts call for which recovery.

Pure: `classify` reads the error description (Telegram words them in a few known ways).
"""

from __future__ import annotations

from enum import StrEnum


class Failure(StrEnum):
    TOPIC_GONE = "topic-gone"  # deleted (or never existed): re-create it, or post elsewhere
    TOPIC_CLOSED = "topic-closed"  # reopen it, then send again
    MESSAGE_GONE = "message-gone"  # the message to edit was deleted: send a new one
    NOT_MODIFIED = "not-modified"  # an edit that changes nothing: as good as done
    BAD_MARKUP = "bad-markup"  # the HTML was refused: send it as plain text
    OTHER = "other"


_PATTERNS: tuple[tuple[Failure, tuple[str, ...]], ...] = (
    (Failure.NOT_MODIFIED, ("message is not modified",)),
    (Failure.TOPIC_CLOSED, ("topic_closed",)),
    (Failure.TOPIC_GONE, ("message thread not found", "topic_id_invalid", "topic_deleted")),
    (
        Failure.MESSAGE_GONE,
        ("message to edit not found", "message to delete not found", "message_id_invalid"),
    ),
    (Failure.BAD_MARKUP, ("can't parse entities", "unsupported start tag", "can't find end tag")),
)


def classify(description: str) -> Failure:
    """The recovery a Bot API error calls for, from its description (case does not matter)."""
    text = description.lower()
    for failure, needles in _PATTERNS:
        if any(needle in text for needle in needles):
            return failure
    return Failure.OTHER
