"""Codex CLI's own signals read as ittybus events: every hooks.json payload and notify JSON that Codex
0.169.0 sent in a real run (tests/fixtures/codex-<version>/signals, made by `python -m
tests.fake_openai.capture --only signals`; the expected reading is the name's text before the first
hyphen, `none` for no event), and the rules around them: the title thread's notify ends nothing, Stop
and notify of one turn publish once, a turn end needs no start signal, unknown fields are kept."""

from __future__ import annotations

import json
from itertools import groupby
from pathlib import Path

import pytest

from tests.fake_openai.client import CODEX_VERSION
from worker.markers import COMPLETION_MARKER
from worker.programs.codex.signals import is_title_thread, notify_payload, read_hook, read_notify
from worker.programs.hook_outcome import Outcome, TurnEnd

SIGNALS = sorted(
    (Path(__file__).resolve().parent.parent / "fixtures" / f"codex-{CODEX_VERSION}" / "signals").glob(
        "*.json"
    )
)
AGENT = "agent-1"


def _load(path: Path) -> dict[str, object]:
    loaded = json.loads(path.read_text(encoding="utf-8"))
    assert isinstance(loaded, dict)
    return loaded


def _read(payload: dict[str, object], session: str = "") -> Outcome | None:
    if "hook_event_name" in payload:
        return read_hook(payload, AGENT)
    return read_notify(payload, AGENT, session)


def _session() -> str:
    start = next(p for p in SIGNALS if "session-start" in p.name)
    return str(_load(start)["session_id"])


@pytest.mark.parametrize("path", SIGNALS, ids=[path.name for path in SIGNALS])
@pytest.mark.parametrize("knows_session", [False, True], ids=["session-unknown", "session-known"])
def test_each_real_signal_reads_as_its_name_says(path: Path, knows_session: bool) -> None:
    expected = path.name.partition("-")[0]
    reading = _read(_load(path), _session() if knows_session else "")
    event = "none" if reading is None or not reading.event_type else reading.state
    assert event == expected


def test_the_real_run_covers_each_kind_of_signal() -> None:
    kinds = {path.name.partition("-")[0] for path in SIGNALS}
    assert kinds == {"none", "running", "permission", "complete", "waiting", "stopped"}
    assert any("title-thread" in path.name for path in SIGNALS)


def test_permission_request_names_the_command_and_the_justification() -> None:
    path = next(p for p in SIGNALS if p.name.startswith("permission-"))
    reading = read_hook(_load(path), AGENT)
    assert reading is not None and reading.prompt == "permission"
    assert reading.data["tool"] == "Bash"
    assert reading.data["detail"] == "rm -rf build && echo rebuilt"
    assert reading.data["description"] == "Rebuilding needs to write outside the sandbox"
    assert reading.turn


def test_stop_and_notify_of_one_turn_are_published_once() -> None:
    ends = [r for p in SIGNALS if isinstance(r := _read(_load(p)), TurnEnd)]
    turns = [r.turn for r in ends]
    assert len(turns) == 4 and len(set(turns)) == 2  # two turns, each told by Stop and by notify
    # the Stop hook publishes one end per turn id (worker.hooks.stop): a turn's two signals carry it, agreeing
    told = [[r.event_type for r in group] for _turn, group in groupby(ends, key=lambda r: r.turn)]
    assert told == [["complete", "complete"], ["waiting", "waiting"]]


def test_a_turn_end_needs_no_start_signal() -> None:
    """The agent sat `waiting` after its last turn; a new turn's start signals were lost (only notify is
    configured, or the hook failed): its end still moves the agent on, and never back to waiting alone."""
    notify = {"type": "agent-turn-complete", "thread-id": "t1", "turn-id": "u2", "input-messages": ["go"]}
    state = "waiting"
    for payload in [{**notify, "last-assistant-message": f"Done.\n{COMPLETION_MARKER}"}]:
        reading = read_notify(payload, AGENT)
        assert reading is not None
        state = reading.state or state
    assert state == "complete"


@pytest.mark.parametrize(
    ("payload", "session", "title"),
    [
        pytest.param({"thread-id": "other", "input-messages": ["go"]}, "main", True, id="another-thread"),
        pytest.param({"thread-id": "main", "input-messages": ["go"]}, "main", False, id="the-session"),
        pytest.param(
            {"thread-id": "x", "input-messages": ["Generate a concise, single-line task title"]},
            "",
            True,
            id="title-text",
        ),
        pytest.param({"thread-id": "x", "input-messages": "not a list"}, "", False, id="odd-messages"),
        pytest.param({}, "", False, id="empty"),
    ],
)
def test_title_thread(payload: dict[str, object], session: str, title: bool) -> None:
    assert is_title_thread(payload, session) == title


@pytest.mark.parametrize(
    "payload",
    [
        pytest.param({}, id="empty"),
        pytest.param({"hook_event_name": 7}, id="name-not-text"),
        pytest.param({"hook_event_name": "BrandNewEvent", "x": 1}, id="unknown-event"),
        pytest.param({"hook_event_name": "SubagentStart"}, id="subagent"),
    ],
)
def test_hooks_that_say_nothing(payload: dict[str, object]) -> None:
    assert read_hook(payload, AGENT) is None


@pytest.mark.parametrize(
    "payload",
    [
        pytest.param(
            {"hook_event_name": "PermissionRequest", "tool_input": "not a dict"}, id="input-not-a-dict"
        ),
        pytest.param(
            {"hook_event_name": "PermissionRequest", "tool_input": {"command": ["git", "push"]}}, id="argv"
        ),
        pytest.param({"hook_event_name": "Stop", "last_assistant_message": None}, id="no-last-message"),
        pytest.param({"hook_event_name": "Stop", "turn_id": 5}, id="turn-not-text"),
        pytest.param({"hook_event_name": "SessionEnd"}, id="no-reason"),
    ],
)
def test_odd_payloads_still_read(payload: dict[str, object]) -> None:
    reading = read_hook(payload, AGENT)
    assert reading is not None and reading.event_type


def test_unknown_fields_are_kept_in_the_event() -> None:
    path = next(p for p in SIGNALS if p.name.startswith("complete-notify"))
    payload = {**_load(path), "brand-new-field": "x" * 500, "count": 3}
    reading = read_notify(payload, AGENT)
    assert reading is not None
    assert reading.data["extra"] == {"brand-new-field": "x" * 200, "count": 3}


@pytest.mark.parametrize(
    ("argument", "expected"),
    [
        pytest.param('{"type": "agent-turn-complete"}', {"type": "agent-turn-complete"}, id="object"),
        pytest.param("not json", None, id="not-json"),
        pytest.param("[1, 2]", None, id="a-list"),
        pytest.param("", None, id="empty"),
    ],
)
def test_notify_argument(argument: str, expected: dict[str, object] | None) -> None:
    assert notify_payload(argument) == expected


def test_a_notify_of_another_type_says_nothing() -> None:
    assert read_notify({"type": "approval-requested", "thread-id": "t"}, AGENT) is None
