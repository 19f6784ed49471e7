"""What the bot makes of the Bot API's refusals."""

from __future__ import annotations

import pytest

from bot.delivery.failures import Failure, classify

CASES = [
    ("thread-not-found", "Bad Request: message thread not found", Failure.TOPIC_GONE),
    ("topic-id-invalid", "Bad Request: TOPIC_ID_INVALID", Failure.TOPIC_GONE),
    ("topic-deleted", "Bad Request: TOPIC_DELETED", Failure.TOPIC_GONE),
    ("topic-closed", "Bad Request: TOPIC_CLOSED", Failure.TOPIC_CLOSED),
    ("edit-target-gone", "Bad Request: message to edit not found", Failure.MESSAGE_GONE),
    ("delete-target-gone", "Bad Request: message to delete not found", Failure.MESSAGE_GONE),
    (
        "not-modified",
        "Bad Request: message is not modified: specified new message content",
        Failure.NOT_MODIFIED,
    ),
    ("bad-entities", 'Bad Request: can\'t parse entities: Unsupported start tag "x"', Failure.BAD_MARKUP),
    ("chat-not-found", "Bad Request: chat not found", Failure.OTHER),
    ("empty", "", Failure.OTHER),
]


@pytest.mark.parametrize(("description", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_classify(description: str, expected: Failure) -> None:
    assert classify(description) is expected
