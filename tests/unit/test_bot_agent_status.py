"""The live status line's view of an agent's turn, whichever of its output and its events the bot reads
first: the times decide. Also the line during a dialog, and an agent met mid-turn."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from bot.feeds.agent_status import (
    ANSWER,
    APPROVAL,
    AgentStatus,
    event_time,
    on_event,
    on_item,
    seeded,
    status_line,
)
from bus.events.activity import TURN_END
from bus.events.event_model import Event

T0 = 1_800_000_000.0
NOW = T0 + 30


def ts(seconds: float) -> str:
    return dt.datetime.fromtimestamp(T0 + seconds, dt.UTC).isoformat()


def out(kind: str, at: float, text: str = "") -> tuple[str, dict[str, str]]:
    return ("item", {"kind": kind, "text": text, "tool": "", "ts": ts(at)})


def event(kind: str, at: float, **data: Any) -> tuple[str, Event]:
    return ("event", Event(type=kind, agent="agent-1", ts=ts(at), data=data))


def replay(*steps: tuple[str, Any]) -> AgentStatus:
    status = AgentStatus()
    for source, what in steps:
        status = on_item(status, what, NOW) if source == "item" else on_event(status, what, NOW)
    return status


BASH = "**Bash**(pytest -q)"
ORDERS = [
    # the end of a short turn read before the output item that started it: the turn is over
    ("end-read-before-the-turn-start", [event("waiting", 10), out("prompt", 5), out("text", 6, "Hi.")], ""),
    ("turn-start-read-before-the-end", [out("prompt", 5), out("text", 6, "Hi."), event("waiting", 10)], ""),
    ("complete-read-first", [event("complete", 10), out("prompt", 5), out("tool_use", 6, BASH)], ""),
    ("pane-says-waiting-first", [event("state", 10, to_state="waiting"), out("prompt", 5)], ""),
    (
        "the-next-turn-after-a-late-start",
        [event("waiting", 10), out("prompt", 5), out("prompt", 20), out("tool_use", 21, BASH)],
        "⚙ Bash pytest -q · 9s — turn 10s, 1 tool",
    ),
    (
        "an-earlier-turns-end-read-late",
        [out("prompt", 5), out("prompt", 20), event("waiting", 10), out("tool_use", 21, BASH)],
        "⚙ Bash pytest -q · 9s — turn 10s, 1 tool",
    ),
    (
        "items-without-a-time-count-as-read",
        [event("waiting", 10), ("item", {"kind": "prompt"})],
        "⚙ thinking · 0s — turn 0s, 0 tools",
    ),
]


@pytest.mark.parametrize(("steps", "line"), [o[1:] for o in ORDERS], ids=[o[0] for o in ORDERS])
def test_either_order_of_output_and_events(steps: list[tuple[str, Any]], line: str) -> None:
    status = replay(*steps)
    assert status_line(status, NOW, young=0) == line
    assert status.live is bool(line)  # an idle agent's line is never refreshed


DIALOGS = [
    ("permission", [out("prompt", 5), out("tool_use", 6, BASH), event("permission", 7)], APPROVAL),
    # the tool use was written before the dialog opened, and read after its event
    (
        "tool-use-read-after-the-dialog",
        [out("prompt", 5), event("permission", 7), out("tool_use", 6, BASH)],
        APPROVAL,
    ),
    ("dialog-before-the-turn-start", [event("permission", 7), out("prompt", 5)], APPROVAL),
    ("pane-shows-a-dialog", [out("prompt", 5), event("state", 7, to_state="permission")], APPROVAL),
    ("ask-user-question", [out("prompt", 5), event("question", 7, prompt_id="p-1a2b3c4d")], ANSWER),
    (
        "allowed-the-tool-runs",
        [out("prompt", 5), out("tool_use", 6, BASH), event("permission", 7),
         event("state", 8, from_state="permission", to_state="running")],
        "⚙ Bash pytest -q · 24s — turn 25s, 1 tool",
    ),
    (
        "allowed-the-result-is-read",
        [out("prompt", 5), out("tool_use", 6, BASH), event("permission", 7), out("tool_result", 9, "ok")],
        "⚙ thinking · 21s — turn 25s, 1 tool",
    ),
    (
        "denied",
        [out("prompt", 5), out("tool_use", 6, BASH), event("permission", 7),
         event("state", 9, from_state="permission", to_state="waiting")],
        "",
    ),
    ("ib-ask-question-ends-the-turn", [out("prompt", 5), event("question", 7, question_id="q-1")], ""),
    # the worker's mark that it read the transcript through a turn's end (written late) is no answer
    (
        "the-workers-turn-end-item",
        [out("prompt", 5), out("tool_use", 6, BASH), event("permission", 7), out(TURN_END, 8)],
        APPROVAL,
    ),
]  # fmt: skip


@pytest.mark.parametrize(("steps", "line"), [d[1:] for d in DIALOGS], ids=[d[0] for d in DIALOGS])
def test_the_line_while_a_dialog_waits(steps: list[tuple[str, Any]], line: str) -> None:
    status = replay(*steps)
    assert status_line(status, NOW, young=0) == line
    assert not status.live or not status.asking  # a dialog's line is not refreshed: it does not change


def test_a_young_turn_has_no_line_but_a_dialog_has() -> None:
    status = replay(out("prompt", 25), out("tool_use", 26, BASH))
    assert status_line(status, NOW, young=10) == ""
    assert status_line(on_event(status, event("permission", 27)[1], NOW), NOW, young=10) == APPROVAL


RUNNING = "⚙ Bash pytest -q · 24s"
SEEDS = [
    ("mid-turn", "running", [out("prompt", 5), out("tool_use", 6, BASH)], f"{RUNNING} — turn 25s, 1 tool"),
    ("idle", "waiting", [out("prompt", 5), out("tool_use", 6, BASH)], ""),
    ("in-a-dialog", "permission", [out("prompt", 5), out("tool_use", 6, BASH)], APPROVAL),
    ("turn-start-unseen", "running", [out("tool_use", 6, BASH)], RUNNING),
    # no record: torn down (merged, killed) while the bot was away; its last turn shows no line
    ("gone", "", [out("prompt", 5), out("tool_use", 6, BASH)], ""),
]  # fmt: skip


@pytest.mark.parametrize(("state", "steps", "line"), [s[1:] for s in SEEDS], ids=[s[0] for s in SEEDS])
def test_an_agent_met_mid_stream(state: str, steps: list[tuple[str, Any]], line: str) -> None:
    status = seeded(AgentStatus(), [fields for _source, fields in steps], state, NOW)
    assert status_line(status, NOW, young=0) == line


WHOLE = "2027-01-15T08:00:00+00:00"  # the envelope's `ts`: whole seconds
AT = dt.datetime.fromisoformat(WHOLE).timestamp()
TIMES = [
    ("stream-id-within-the-second", WHOLE, f"{int(AT * 1000) + 800}-0", AT + 0.8),
    ("redis-clock-a-little-behind", WHOLE, f"{int(AT * 1000) - 20}-0", AT - 0.02),
    ("spooled-the-end-of-its-second", WHOLE, f"{int(AT * 1000) + 95_000}-0", AT + 0.999),
    ("no-id", WHOLE, "", AT + 0.999),
    ("precise-ts", "2027-01-15T08:00:00.250+00:00", "", AT + 0.25),
    ("no-ts-now", "", f"{int(AT * 1000) + 800}-3", NOW + 0.5),
]


@pytest.mark.parametrize(("ts_", "entry", "at"), [t[1:] for t in TIMES], ids=[t[0] for t in TIMES])
def test_event_time(ts_: str, entry: str, at: float) -> None:
    told = event_time(Event(type="waiting", ts=ts_, id=entry), NOW + 0.5)
    assert told == pytest.approx(at, rel=0, abs=1e-6)


def test_a_turn_within_one_second() -> None:
    """The turn starts at .2 and ends at .8 of the same second: `ts` alone would put the end first."""
    start = dt.datetime.fromtimestamp(AT + 0.2, dt.UTC).isoformat()
    end = Event(type="waiting", agent="agent-1", ts=WHOLE, id=f"{int(AT * 1000) + 800}-0")
    for steps in (["end", "prompt"], ["prompt", "end"]):
        status = AgentStatus()
        for step in steps:
            if step == "end":
                status = on_event(status, end, AT + 5)
            else:
                status = on_item(status, {"kind": "prompt", "ts": start}, AT + 5)
        assert status_line(status, AT + 5, young=0) == "" and not status.live, steps
