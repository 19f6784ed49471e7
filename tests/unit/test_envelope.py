"""The envelope: JSON round trips exactly; decoding tolerates garbage, unknown fields and unknown types."""

from __future__ import annotations

import json

import pytest

from bus.events.envelope import ALL_TYPES, decode, encode, make_event, to_jsonl
from bus.events.event_model import Event

TRICKY = [
    "".join(chr(c) for c in range(32)),
    'quote " backslash \\ slash /',
    "é 漢字 🤖 \u2028 \u2029 \x85 \x7f",
    "",
]


@pytest.mark.parametrize("msg", TRICKY, ids=["controls", "quotes", "unicode", "empty"])
def test_round_trip(msg: str) -> None:
    event = make_event("question", msg, sender="agent-1", project="p", data={"k": [msg]})
    back = decode("1-0", encode(event))
    assert back == {**event, "id": "1-0"}
    line = to_jsonl(back)
    assert "\n" not in line and len(line.splitlines()) == 1
    assert json.loads(line)["msg"] == msg


@pytest.mark.parametrize(
    "raw", [None, b"\xff\xfe", "not json", "[1]", '"str"'], ids=["none", "bytes", "text", "list", "str"]
)
def test_decode_never_raises(raw: str | bytes | None) -> None:
    event = decode("2-0", raw)
    assert event["id"] == "2-0" and event["type"] == "invalid"


def test_jsonl_puts_seed_fields_first() -> None:
    line = to_jsonl(decode("3-0", encode(make_event("complete", "m", sender="a"))))
    assert list(json.loads(line))[:5] == ["id", "ts", "from", "type", "msg"]


def test_model_keeps_unknown_fields_and_types() -> None:
    event = Event.from_entry(
        "4-0", json.dumps({"type": "from_the_future", "from": "x", "extra": {"a": 1}, "data": 7})
    )
    assert not event.known and event.type == "from_the_future" and event.sender == "x"
    assert event.envelope()["extra"] == {"a": 1} and event.data == {"value": 7}


def test_model_coerces_odd_values() -> None:
    event = Event.from_envelope({"type": 3, "from": None, "project": 12, "msg": None})
    assert (event.type, event.sender, event.project, event.msg) == ("3", "", "12", "")


def test_every_known_type_is_unique() -> None:
    assert len(ALL_TYPES) == len(set(ALL_TYPES)) == 33
