"""The one shape of `data.options` in events (bus.events.event_options), and the older plain words still
read."""

from __future__ import annotations

from typing import Any

import pytest

from bus.events.event_options import listed, options_of


def test_listed_numbers_as_a_dialog_draws_or_not_at_all() -> None:
    assert listed(["Postgres", "SQLite"], numbered=True) == [
        {"number": 1, "label": "Postgres"},
        {"number": 2, "label": "SQLite"},
    ]
    assert listed(("approve", "deny")) == [
        {"number": None, "label": "approve"},
        {"number": None, "label": "deny"},
    ]
    assert listed([]) == []


@pytest.mark.parametrize(
    ("value", "read"),
    [
        ([{"number": 1, "label": "Yes"}, {"number": None, "label": "No"}], [(1, "Yes"), (None, "No")]),
        (["approve", "deny"], [(None, "approve"), (None, "deny")]),  # an older producer's words
        (None, []),
        ([], []),
        ("a,b", None),
        ([{"number": "1", "label": "Yes"}], None),
        ([{"number": True, "label": "Yes"}], None),
        ([{"number": 1}], None),
        (["Yes", {"number": 2, "label": "No"}], None),
        ([3], None),
    ],
    ids=[
        "options",
        "plain-words",
        "none",
        "empty",
        "text",
        "text-number",
        "bool",
        "no-label",
        "mixed",
        "int",
    ],
)
def test_options_of(value: Any, read: list[tuple[int | None, str]] | None) -> None:
    assert options_of(value) == read


def test_what_listed_makes_reads_back() -> None:
    assert options_of(listed(["a", "b"], numbered=True)) == [(1, "a"), (2, "b")]
