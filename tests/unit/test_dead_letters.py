"""Each stream entry is read on its own: an event, or poison with the reason (table-driven, pure)."""

from __future__ import annotations

import json

import pytest

from bus.readers.dead_letters import Poison, raw_bytes, read_entry

GOOD = json.dumps({"type": "complete", "from": "a1", "msg": "done"})


@pytest.mark.parametrize(
    ("fields", "reason", "raw"),
    [
        ({"e": b"\xff\xfe".decode("utf-8", "surrogateescape")}, "not valid UTF-8", b"\xff\xfe"),
        ({"e": b"\xff{}"}, "not valid UTF-8", b"\xff{}"),
        ({"e": "not json"}, "not JSON", b"not json"),
        ({"e": "{"}, "not JSON", b"{"),
        ({"e": "[1, 2]"}, "not a JSON object (a list)", b"[1, 2]"),
        ({"e": '"text"'}, "not a JSON object (a str)", b'"text"'),
        ({"e": "null"}, "not a JSON object (a NoneType)", b"null"),
        ({"e": "{}"}, "no event type (field 'type' must be a non-empty string)", b"{}"),
        ({"e": '{"type": 7}'}, "no event type (field 'type' must be a non-empty string)", b'{"type": 7}'),
        ({"other": "x"}, "no 'e' field", b'{"other":"x"}'),
        ({"e": "[" * 100_000}, "not JSON", b"[" * 100_000),
    ],
    ids=[
        "bad-utf8",
        "bad-utf8-bytes",
        "text",
        "cut",
        "list",
        "string",
        "null",
        "no-type",
        "int-type",
        "no-field",
        "deep",
    ],
)
def test_poison_is_named_with_its_bytes(fields: dict[str, object], reason: str, raw: bytes) -> None:
    found = read_entry("ns:events", "5-0", fields)
    assert found == Poison("ns:events", "5-0", reason, raw)


def test_an_event_gets_its_id_and_keeps_unknown_fields() -> None:
    found = read_entry("ns:events", "6-0", {"e": json.dumps({"type": "from_the_future", "novel": [1]})})
    assert found == {
        "type": "from_the_future",
        "novel": [1],
        "id": "6-0",
        "ts": "",
        "from": "unknown",
        "msg": "",
    }
    assert read_entry("s", "7-0", {"e": GOOD})["msg"] == "done"  # type: ignore[index]


def test_raw_bytes_round_trips_surrogateescape() -> None:
    assert raw_bytes(b"\x80abc".decode("utf-8", "surrogateescape")) == b"\x80abc"
    assert raw_bytes(None) == b""
