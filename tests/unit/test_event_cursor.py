"""Where a trimmed events stream may have lost entries, from its XINFO STREAM (pure): a cursor below that
point reads `missed`."""

from __future__ import annotations

from typing import Any

import pytest

from bus.readers.event_cursor import kept_from, stream_id

FIRST_52: tuple[str, dict[str, str]] = ("5-2", {})
FIRST_90: tuple[str, dict[str, str]] = ("9-0", {})


@pytest.mark.parametrize(
    ("info", "kept"),
    [
        ({"entries-added": 3, "length": 3, "max-deleted-entry-id": "0-0"}, (0, 0)),
        (
            {"entries-added": 3, "length": 2, "max-deleted-entry-id": "5-1", "first-entry": ("5-2", {})},
            (5, 2),
        ),
        (
            {"entries-added": 3, "length": 1, "max-deleted-entry-id": "0-0", "first-entry": ("9-0", {})},
            (9, 0),
        ),
        ({"entries-added": 3, "length": 0, "max-deleted-entry-id": "0-0"}, (9, 1)),
        ({"entries-added": 3, "length": 3, "max-deleted-entry-id": "7-0"}, (7, 0)),
    ],
    ids=["never-trimmed", "xdel-then-first", "trimmed", "trimmed-to-nothing", "deleted-only"],
)
def test_where_the_stream_may_have_lost_entries(info: dict[str, Any], kept: tuple[int, int]) -> None:
    assert kept_from(info, "9-0") == kept


@pytest.mark.parametrize(("text", "pair"), [("0", (0, 0)), ("12-3", (12, 3)), ("10-0", (10, 0))])
def test_stream_ids_sort_as_redis_sorts_them(text: str, pair: tuple[int, int]) -> None:
    assert stream_id(text) == pair
    assert stream_id("9-5") < stream_id("10-0")
