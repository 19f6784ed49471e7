"""The runaway watchdog's signs, pure: the same call N times in a row (and not N-1, nor with another call
between), a quiet turn, a fast burn; and what the hook records of a call, with the arguments Claude Code
leaves out of the hook's payload read back from the transcript."""

from __future__ import annotations

import json

import pytest

from worker.budgets.runaway import AgentCalls, Call, Limits, burn_rate, burning, event_data, quiet, repeated
from worker.hooks.hold import digest, summary
from worker.hooks.transcript_lines import recorded_input

LIMITS = Limits(repeats=4, quiet_minutes=10, tokens_per_minute=1000, burn_window=5)


def _calls(*names: str) -> AgentCalls:
    agent = AgentCalls(LIMITS.repeats)
    for at, name in enumerate(names):
        tool, _, arg = name.partition(":")
        agent.add(Call(tool, digest(tool, {"command": arg}), f"{tool}: {arg}", float(at)))
    return agent


@pytest.mark.parametrize(
    ("names", "found"),
    [
        (("Bash:ls",) * 4, True),
        (("Bash:ls",) * 3, False),
        (("Bash:ls", "Bash:ls", "Bash:pwd", "Bash:ls", "Bash:ls"), False),
        (("Bash:pwd",) + ("Bash:ls",) * 4, True),
        (("Bash:ls",) * 3 + ("Read:ls",), False),
        (("Bash:ls",) * 4 + ("Bash:pwd",), False),
        (("Bash:ls",) * 20, True),
    ],
    ids=[
        "n-in-a-row",
        "one-short",
        "broken-by-another",
        "after-another",
        "same-args-other-tool",
        "moved-on",
        "twenty",
    ],
)
def test_repeated(names: tuple[str, ...], found: bool) -> None:
    finding = repeated(_calls(*names), LIMITS)
    assert (finding is not None) is found
    if finding is not None:
        assert finding.rule == "repeat"
        assert "4 times in a row" in finding.reason
        assert finding.calls[-1].summary == f"{names[-1].partition(':')[0]}: {names[-1].partition(':')[2]}"


def test_forget_starts_again() -> None:
    agent = _calls(*("Bash:ls",) * 4)
    agent.forget(10.0)
    agent.add(Call("Bash", digest("Bash", {"command": "ls"}), "Bash: ls", 11.0))
    assert repeated(agent, LIMITS) is None


def test_event_lists_last_ten_calls() -> None:
    finding = repeated(_calls(*("Bash:ls",) * 20), LIMITS)
    assert finding is not None
    data = event_data(finding)
    assert data["rule"] == "repeat"
    assert isinstance(data["calls"], list) and len(data["calls"]) == 10


@pytest.mark.parametrize(
    ("turn_started", "progress", "text_at", "now", "found"),
    [
        (0.0, 0.0, 0.0, 5000.0, False),
        (100.0, 0.0, 0.0, 100.0 + 599, False),
        (100.0, 0.0, 0.0, 100.0 + 600, True),
        (100.0, 500.0, 0.0, 100.0 + 600, False),
        (100.0, 0.0, 500.0, 100.0 + 600, False),
        (100.0, 500.0, 0.0, 500.0 + 601, True),
    ],
    ids=["no-turn", "not-yet", "ten-quiet-minutes", "file-changed", "wrote-text", "quiet-since-change"],
)
def test_quiet(turn_started: float, progress: float, text_at: float, now: float, found: bool) -> None:
    agent = AgentCalls(LIMITS.repeats)
    if progress:
        agent.add(Call("Edit", "x", "Edit: a.py", progress))
    finding = quiet(agent, turn_started, text_at, now, LIMITS)
    assert (finding is not None) is found


@pytest.mark.parametrize(
    ("usage", "rate", "found"),
    [
        ([], 0.0, False),
        ([(900.0, 5000)], 1000.0, False),
        ([(900.0, 5000), (950.0, 1)], 1000.2, True),
        ([(600.0, 99_999), (950.0, 100)], 20.0, False),
    ],
    ids=["nothing", "at-the-limit", "over", "old-answers-left-out"],
)
def test_burn(usage: list[tuple[float, int]], rate: float, found: bool) -> None:
    assert burn_rate(usage, 1000.0, LIMITS.burn_window) == pytest.approx(rate)
    assert (burning(AgentCalls(), usage, 1000.0, LIMITS) is not None) is found


@pytest.mark.parametrize(
    ("tool", "tool_input", "shown"),
    [
        ("Bash", {"command": "pytest -q\n  tests/"}, "Bash: pytest -q tests/"),
        ("Read", {"file_path": "src/app.py"}, "Read: src/app.py"),
        ("Task", {}, "Task"),
        ("Odd", {"n": 1}, 'Odd: {"n":1}'),
        ("Bash", {"command": "x" * 300}, "Bash: " + "x" * 153 + "…"),
        ("ExitPlanMode", {"plan": "1. Add a flag\n2. Test it"}, "ExitPlanMode: 1. Add a flag 2. Test it"),
    ],
    ids=["bash-one-line", "read", "no-input", "other-input", "cut", "plan"],
)
def test_summary(tool: str, tool_input: dict[str, object], shown: str) -> None:
    assert summary(tool, tool_input) == shown


def test_digest_tells_arguments_apart() -> None:
    assert digest("Bash", {"command": "ls"}) == digest("Bash", {"command": "ls"})
    assert digest("Bash", {"command": "ls"}) != digest("Bash", {"command": "ls -a"})
    assert digest("Bash", {"command": "ls"}) != digest("Read", {"command": "ls"})


def _tool_use(call_id: str, tool: str, given: object) -> str:
    block = {"type": "tool_use", "id": call_id, "name": tool, "input": given}
    return json.dumps({"type": "assistant", "message": {"role": "assistant", "content": [block]}})


PLAN_CALLS = [
    _tool_use(f"toolu_{n}", "ExitPlanMode", {"plan": f"1. Add flag {n}\n2. Test it"}) for n in range(6)
]


@pytest.mark.parametrize(
    ("lines", "call_id", "found"),
    [
        (PLAN_CALLS, "toolu_3", {"plan": "1. Add flag 3\n2. Test it"}),
        (PLAN_CALLS, "toolu_9", None),
        (PLAN_CALLS, "", None),
        ([_tool_use("toolu_1", "Task", {})], "toolu_1", {}),
        ([_tool_use("toolu_1", "Odd", "text")], "toolu_1", None),
        (
            ['{"toolu_1" not json', "[]", '"toolu_1"', *PLAN_CALLS[1:2]],
            "toolu_1",
            {"plan": "1. Add flag 1\n2. Test it"},
        ),
        (
            [
                json.dumps(
                    {
                        "type": "user",
                        "message": {"content": [{"type": "tool_result", "tool_use_id": "toolu_1"}]},
                    }
                )
            ],
            "toolu_1",
            None,
        ),
    ],
    ids=[
        "the-call",
        "not-written-yet",
        "no-id",
        "empty-input",
        "input-not-an-object",
        "garbage-skipped",
        "result-only",
    ],
)
def test_recorded_input(lines: list[str], call_id: str, found: dict[str, object] | None) -> None:
    assert recorded_input(lines, call_id) == found


def test_plans_told_apart_by_their_recorded_input() -> None:
    """Claude Code hands every ExitPlanMode to the hook as `{}`: named by the transcript's input, six
    different plans are six calls, and the same plan six times is still a loop."""
    agent, again = AgentCalls(LIMITS.repeats), AgentCalls(LIMITS.repeats)
    for n in range(6):
        given = recorded_input(PLAN_CALLS, f"toolu_{n}") or {}
        agent.add(
            Call("ExitPlanMode", digest("ExitPlanMode", given), summary("ExitPlanMode", given), float(n))
        )
        same = recorded_input(PLAN_CALLS, "toolu_0") or {}
        again.add(Call("ExitPlanMode", digest("ExitPlanMode", same), summary("ExitPlanMode", same), float(n)))
    assert repeated(agent, LIMITS) is None
    assert repeated(again, LIMITS) is not None
