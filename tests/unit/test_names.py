"""Names of listeners, groups and workers, and stream ids people type: what is refused, and why."""

from __future__ import annotations

import pytest

from bus.wire.names import name_problem, stream_id_problem, worker_id_problem

GOOD_NAMES = ["default", "ci-bot", "team.a", "listen:2", "A1", "x" * 64]
BAD_NAMES = {
    "empty": "",
    "slash": "a/b",
    "dot-dot": "a..b",
    "up": "../x",
    "nul": "a\0b",
    "newline": "a\nb",
    "space": "a b",
    "backslash": "a\\b",
    "leading-dot": ".hidden",
    "unicode": "é",
    "too-long": "x" * 65,
}


@pytest.mark.parametrize("value", GOOD_NAMES)
def test_good_names(value: str) -> None:
    assert name_problem("listener name", value) is None


@pytest.mark.parametrize("value", BAD_NAMES.values(), ids=BAD_NAMES.keys())
def test_bad_names_are_refused_naming_the_value(value: str) -> None:
    for problem in (name_problem("group name", value), worker_id_problem(value)):
        assert problem is not None and repr(value) in problem


def test_worker_ids_take_no_colon() -> None:
    assert name_problem("listener name", "a:b") is None and worker_id_problem("a:b") is not None


STREAM_IDS = {
    "ms": ("1732560005123", True),
    "ms-seq": ("1732560005123-7", True),
    "zero": ("0", True),
    "largest": (f"{2**64 - 1}-{2**64 - 1}", True),
    "ms-too-large": ("99999999999999999999-0", False),
    "seq-too-large": ("1-99999999999999999999", False),
    "negative": ("-1", False),
    "letters": ("abc", False),
    "unicode-digits": ("١٢", False),
    "empty-seq": ("1-", False),
    "two-dashes": ("1-2-3", False),
}


@pytest.mark.parametrize(("text", "fine"), STREAM_IDS.values(), ids=STREAM_IDS.keys())
def test_stream_ids(text: str, fine: bool) -> None:
    assert (stream_id_problem(text) is None) is fine
