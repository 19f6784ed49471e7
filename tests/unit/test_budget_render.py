"""How the budget and watchdog events read in Telegram, with their buttons: Raise by the step and Stop under
a used-up budget, Continue and Stop under a runaway, none under a warning; odd data still renders."""

from __future__ import annotations

from typing import Any

import pytest

from bot.render.render import Button, Rendered, Style, render
from bot.topics.routing import Bindings, Delivery, route
from bus.events.event_model import Event

BUDGET = {
    "scope": "agent",
    "target": "agent-x",
    "unit": "usd",
    "limit": 2.5,
    "spent": 2.61,
    "share": 1.044,
    "limit_shown": "$2.50",
    "spent_shown": "$2.61",
    "raise_by": "$2.50",
}
RUNAWAY = {
    "rule": "repeat",
    "reason": "the same call 6 times in a row: Bash: ls",
    "calls": [{"tool": "Bash", "summary": f"Bash: {c}", "at": 1.0} for c in ("pwd", *["ls"] * 6)],
}


def event(type_: str, data: dict[str, Any], agent: str | None = "agent-x") -> Event:
    return Event.model_validate({"type": type_, "msg": "", "agent": agent, "project": "shed", "data": data})


CASES = [
    (
        "warning",
        event("budget_warning", {**BUDGET, "spent_shown": "$2.05", "share": 0.82}),
        "⚠ agent-x is near its budget\nagent agent-x budget: $2.05 of $2.50 (82%)",
        (),
    ),
    (
        "exceeded",
        event("budget_exceeded", BUDGET),
        "⏸ agent-x is paused: budget used up\nagent agent-x budget: $2.61 of $2.50 (104%)\n"
        "Its next tool call waits for you: raise by $2.50, or stop it.",
        ((Button("Raise by $2.50", "b:agent-x"), Button("✗ Stop", "k:agent-x")),),
    ),
    (
        "runaway",
        event("runaway", RUNAWAY),
        "⏸ agent-x is paused by the runaway watchdog\nWhy: the same call 6 times in a row: Bash: ls\n"
        "Last tool calls:\n" + "\n".join(["  • Bash: ls"] * 5),
        ((Button("▶ Continue", "c:agent-x"), Button("✗ Stop", "k:agent-x")),),
    ),
    (
        "runaway-bare",
        event("runaway", {}),
        "⏸ agent-x is paused by the runaway watchdog\nWhy: no reason given",
        ((Button("▶ Continue", "c:agent-x"), Button("✗ Stop", "k:agent-x")),),
    ),
    (
        "exceeded-odd-data",
        event("budget_exceeded", {"share": "lots", "calls": 3}),
        "⏸ agent-x is paused: budget used up\n? ? budget: ? of ?\n"
        "Its next tool call waits for you: raise by ?, or stop it.",
        ((Button("Raise by ?", "b:agent-x"), Button("✗ Stop", "k:agent-x")),),
    ),
    (
        "no-agent-no-buttons",
        event("runaway", RUNAWAY, agent=None),
        "⏸ ? is paused by the runaway watchdog\nWhy: the same call 6 times in a row: Bash: ls\n"
        "Last tool calls:\n" + "\n".join(["  • Bash: ls"] * 5),
        (),
    ),
]


@pytest.mark.parametrize(("event_", "text", "buttons"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_full(event_: Event, text: str, buttons: tuple[tuple[Button, ...], ...]) -> None:
    assert render(event_, Style.FULL) == Rendered(text, buttons)


@pytest.mark.parametrize("type_", ["budget_warning", "budget_exceeded", "runaway"])
def test_summary_is_one_line_without_buttons(type_: str) -> None:
    shown = render(event(type_, {**BUDGET, **RUNAWAY}), Style.SUMMARY)
    assert "\n" not in shown.text and shown.buttons == ()


@pytest.mark.parametrize(
    ("type_", "person"),
    [("budget_warning", False), ("budget_exceeded", True), ("runaway", True)],
)
def test_a_pause_reaches_a_person_without_an_agent_topic(type_: str, person: bool) -> None:
    """With no topic for the agent it gets one made; a pause without an agent still reaches General."""
    deliveries = route(event(type_, {}, agent=None), Bindings())
    assert deliveries == ([Delivery(None, Style.FULL)] if person else [])
