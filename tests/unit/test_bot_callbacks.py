"""Callback data of inline buttons: round trips, the 64-byte limit, and forged or garbled data."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.render.callbacks import CALLBACK_MAX_BYTES, Action, Callback, parse_callback

VALID = [
    ("diff", "d:agent-abc123", Callback(Action.DIFF, "agent-abc123")),
    ("merge", "m:agent-abc123", Callback(Action.MERGE, "agent-abc123")),
    ("kill", "k:agent-abc123", Callback(Action.KILL, "agent-abc123")),
    ("look", "l:agent-abc123", Callback(Action.LOOK, "agent-abc123")),
    ("screenshot", "s:agent-abc123", Callback(Action.SHOT, "agent-abc123")),
    ("approve a review", "v:agent-abc123", Callback(Action.APPROVE, "agent-abc123")),
    ("raise a budget", "b:agent-abc123", Callback(Action.RAISE, "agent-abc123")),
    ("continue after the watchdog", "c:agent-abc123", Callback(Action.CONTINUE, "agent-abc123")),
    ("plan-approve", "p:plan-3", Callback(Action.PLAN_APPROVE, "plan-3")),
    ("plan-edit", "e:plan-3", Callback(Action.PLAN_EDIT, "plan-3")),
    ("plan-discard", "x:plan-3", Callback(Action.PLAN_DISCARD, "plan-3")),
    ("answer", "a:q-17:0", Callback(Action.ANSWER, "q-17", 0)),
    ("answer-stream-id", "a:1732560005123-0:12", Callback(Action.ANSWER, "1732560005123-0", 12)),
    ("dots-underscores", "d:my_agent.v2", Callback(Action.DIFF, "my_agent.v2")),
    ("longest-answer", f"a:{'q' * 56}:99", Callback(Action.ANSWER, "q" * 56, 99)),
    ("allow", "y:agent-abc123:0a1b2c3d", Callback(Action.ALLOW, "agent-abc123", prompt="p-0a1b2c3d")),
    ("always", "w:agent-abc123:0a1b2c3d", Callback(Action.ALWAYS, "agent-abc123", prompt="p-0a1b2c3d")),
    ("deny", "n:agent-abc123:0a1b2c3d", Callback(Action.DENY, "agent-abc123", prompt="p-0a1b2c3d")),
    ("dialog-option", "o:q-0a1b2c3d:3", Callback(Action.OPTION, "q-0a1b2c3d", 3)),
]


@pytest.mark.parametrize(("data", "callback"), [r[1:] for r in VALID], ids=[r[0] for r in VALID])
def test_valid_data_round_trips(data: str, callback: Callback) -> None:
    assert parse_callback(data) == callback
    assert callback.encode() == data
    assert len(data.encode()) <= CALLBACK_MAX_BYTES


FORGED = [
    ("empty", ""),
    ("unknown-action", "z:agent-1"),
    ("no-target", "d:"),
    ("upper-case-action", "D:agent-1"),
    ("extra-field", "d:agent-1:2"),
    ("answer-without-option", "a:q-1"),
    ("answer-negative", "a:q-1:-1"),
    ("answer-leading-zero", "a:q-1:01"),
    ("answer-plus", "a:q-1:+1"),
    ("answer-too-big", "a:q-1:100"),
    ("answer-not-a-number", "a:q-1:one"),
    ("option-without-number", "o:q-1"),
    ("option-too-big", "o:q-1:100"),
    ("space", "d:agent 1"),
    ("newline-after", "d:agent-1\n"),
    ("leading-dash", "d:-rf"),
    ("non-ascii", "d:agént"),
    ("id-too-long", "d:" + "a" * 57),
    ("over-64-bytes", "a:" + "q" * 70 + ":1"),
    ("html", "d:<b>"),
    ("null-byte", "d:agent\x00"),
    ("allow-without-dialog", "y:agent-1"),
    ("allow-short-dialog", "y:agent-1:0a1b2c3"),
    ("allow-dialog-not-hex", "y:agent-1:0a1b2c3z"),
    ("deny-upper-hex", "n:agent-1:0A1B2C3D"),
]


@pytest.mark.parametrize("data", [r[1] for r in FORGED], ids=[r[0] for r in FORGED])
def test_forged_or_malformed_data_is_refused(data: str) -> None:
    assert parse_callback(data) is None


@pytest.mark.parametrize(
    "callback",
    [
        Callback(Action.DIFF, "a" * 57),
        Callback(Action.ANSWER, "q", None),
        Callback(Action.KILL, "x", 3),
        Callback(Action.LOOK, ""),
    ],
    ids=["id-too-long", "answer-without-option", "option-on-agent-action", "empty-id"],
)
def test_unencodable_callbacks_encode_to_none(callback: Callback) -> None:
    assert callback.encode() is None


@given(st.text(max_size=200))
def test_anything_parses_to_none_or_fits(data: str) -> None:
    callback = parse_callback(data)
    if callback is not None:
        assert len(data.encode()) <= CALLBACK_MAX_BYTES
        assert callback.encode() == data


@given(st.sampled_from(list(Action)), st.text(max_size=80), st.integers(min_value=-5, max_value=200))
def test_encoded_data_always_parses_back(action: Action, target: str, option: int) -> None:
    data = Callback(action, target, option if action is Action.ANSWER else None).encode()
    if data is not None:
        assert len(data.encode()) <= CALLBACK_MAX_BYTES
        assert parse_callback(data) == Callback(action, target, option if action is Action.ANSWER else None)
