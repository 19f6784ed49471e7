"""The tmux indicator's pure core: the eight transitions of the Stop-only machine, the 30-minute timeout at
its boundary, the tool emojis of real-time mode, and the tmux options and commands that carry the state."""

from __future__ import annotations

import json

import pytest

from worker.tmux.window_indicator import (
    OPT_AGENT_RUNNING,
    OPT_LAST_ACTIVE,
    OPT_LAST_COMPLETED,
    OPT_PHASE,
    HookInput,
    IndicatorDecision,
    IndicatorState,
    Phase,
    WindowSnapshot,
    next_indicator,
    parse_snapshot,
    previous_state,
    project_name,
    read_payload,
    state_options,
    tmux_commands,
    turn_tools,
)

NOW = 1_000_000
RECENT = NOW - 60

IDLE = IndicatorState(Phase.IDLE)
WORKING = IndicatorState(Phase.WORKING, agent_running=True, last_active=RECENT)
COMPLETED = IndicatorState(Phase.COMPLETED, last_completed=RECENT, last_active=RECENT)
BASE = IndicatorState(Phase.BASE, last_active=RECENT)


def stop(*tools: str) -> HookInput:
    return HookInput("Stop", "proj", turn_tools=tools)


def tool(name: str) -> HookInput:
    return HookInput("PostToolUse", "proj", tool_name=name)


TICK = HookInput("SessionStart", "proj")


DONE = str(NOW)
TRANSITIONS: dict[str, tuple[IndicatorState, HookInput, float, tuple[Phase, str, str, str]]] = {
    "idle-to-working": (IDLE, stop("Read", "Task"), NOW, (Phase.WORKING, "🤖⚙️proj", "true", "")),
    "idle-to-completed": (IDLE, stop("Read", "Edit"), NOW, (Phase.COMPLETED, "🤖✅proj", "false", DONE)),
    "idle-to-base": (IDLE, stop("Read", "Grep", "Glob"), NOW, (Phase.BASE, "🤖proj", "false", "")),
    "idle-to-base-no-tools": (IDLE, stop(), NOW, (Phase.BASE, "🤖proj", "false", "")),
    "working-to-completed": (WORKING, stop("Edit"), NOW, (Phase.COMPLETED, "🤖✅proj", "false", DONE)),
    "working-to-completed-quiet-turn": (WORKING, stop(), NOW, (Phase.COMPLETED, "🤖✅proj", "false", DONE)),
    "working-to-completed-taskoutput": (
        WORKING,
        tool("TaskOutput"),
        NOW,
        (Phase.COMPLETED, "🤖✅proj", "false", DONE),
    ),
    "working-to-working": (WORKING, stop("Task"), NOW, (Phase.WORKING, "🤖⚙️proj", "true", "")),
    "completed-to-idle": (COMPLETED, TICK, RECENT + 1801, (Phase.IDLE, "🤖✅proj", "false", "")),
    "base-to-idle": (BASE, TICK, RECENT + 1801, (Phase.IDLE, "🤖✅proj", "false", "")),
    "base-to-working": (BASE, stop("Task"), NOW, (Phase.WORKING, "🤖⚙️proj", "true", "")),
    "base-to-completed": (BASE, stop("Bash"), NOW, (Phase.COMPLETED, "🤖✅proj", "false", DONE)),
}


@pytest.mark.parametrize(("prev", "event", "now", "expected"), TRANSITIONS.values(), ids=TRANSITIONS.keys())
def test_transitions(
    prev: IndicatorState, event: HookInput, now: float, expected: tuple[Phase, str, str, str]
) -> None:
    """Every transition of the seed's diagram (WORKING → COMPLETED by Stop and by TaskOutput)."""
    phase, name, running, completed_at = expected
    decision = next_indicator(prev, event, now)
    assert decision.state.phase is phase
    assert decision.window_name == name
    assert decision.options[OPT_AGENT_RUNNING] == running
    assert decision.options[OPT_LAST_COMPLETED] == completed_at
    assert decision.options[OPT_PHASE] == phase.value


@pytest.mark.parametrize(
    ("prev", "elapsed", "phase"),
    [
        pytest.param(COMPLETED, 1800, Phase.COMPLETED, id="completed-1800s-stays"),
        pytest.param(COMPLETED, 1800.9, Phase.COMPLETED, id="completed-1800s-and-a-fraction-stays"),
        pytest.param(COMPLETED, 1801, Phase.IDLE, id="completed-1801s-goes"),
        pytest.param(BASE, 1800, Phase.BASE, id="base-1800s-stays"),
        pytest.param(BASE, 1801, Phase.IDLE, id="base-1801s-goes"),
        pytest.param(WORKING, 86400, Phase.WORKING, id="working-never-times-out"),
        pytest.param(IndicatorState(Phase.COMPLETED), 0, Phase.IDLE, id="completed-without-time-expires"),
    ],
)
def test_timeout_boundary(prev: IndicatorState, elapsed: float, phase: Phase) -> None:
    assert next_indicator(prev, TICK, RECENT + elapsed).state.phase is phase


def test_a_tick_that_changes_nothing_leaves_the_window_name_alone() -> None:
    decision = next_indicator(COMPLETED, TICK, NOW)
    assert decision == IndicatorDecision(COMPLETED, state_options(COMPLETED), None)


@pytest.mark.parametrize(
    ("prev", "event", "phase", "completed_at"),
    [
        pytest.param(COMPLETED, stop("Read"), Phase.COMPLETED, RECENT, id="look-only-turn-keeps-completion"),
        pytest.param(COMPLETED, stop("Write"), Phase.COMPLETED, NOW, id="new-work-renews-completion"),
        pytest.param(COMPLETED, stop("Task"), Phase.WORKING, RECENT, id="task-after-completion"),
        pytest.param(
            IndicatorState(Phase.COMPLETED, last_completed=NOW - 1801),
            stop("Read"),
            Phase.BASE,
            None,
            id="expired-completion-then-look-only-turn",
        ),
        pytest.param(IndicatorState(Phase.ACTIVE), stop(), Phase.BASE, None, id="active-then-quiet-stop"),
    ],
)
def test_stops_beyond_the_diagram(
    prev: IndicatorState, event: HookInput, phase: Phase, completed_at: int | None
) -> None:
    state = next_indicator(prev, event, NOW).state
    assert (state.phase, state.last_completed) == (phase, completed_at)


@pytest.mark.parametrize(
    ("name", "window"),
    [
        pytest.param("Edit", "🤖✏️proj", id="edit"),
        pytest.param("MultiEdit", "🤖✏️proj", id="multiedit"),
        pytest.param("Bash", "🤖🧪proj", id="bash"),
        pytest.param("Read", "🤖🔍proj", id="read"),
        pytest.param("Grep", "🤖🔍proj", id="grep"),
        pytest.param("Glob", "🤖🔍proj", id="glob"),
        pytest.param("TodoWrite", "🤖⚙️proj", id="todowrite"),
        pytest.param("WebFetch", "🤖🌐proj", id="webfetch"),
        pytest.param("WebSearch", "🤖🌐proj", id="websearch"),
        pytest.param("Write", "🤖📝proj", id="write"),
        pytest.param("Skill", "🤖🎯proj", id="skill"),
        pytest.param("SlashCommand", "🤖⚡proj", id="slashcommand"),
        pytest.param("TaskOutput", "🤖📤proj", id="taskoutput-without-agent"),
        pytest.param("mcp__github__create_issue", "🤖💎proj", id="other-tool"),
        pytest.param("AskUserQuestion", "🤖🚨proj", id="question-alerts"),
        pytest.param("Task", "🤖⚙️proj", id="task-starts-agent"),
    ],
)
def test_real_time_tool_emojis(name: str, window: str) -> None:
    assert next_indicator(IDLE, tool(name), NOW).window_name == window


@pytest.mark.parametrize(
    ("name", "phase", "window"),
    [
        pytest.param("Edit", Phase.ACTIVE, "🤖⚙️proj", id="tool-while-agent-runs-keeps-gear"),
        pytest.param("AskUserQuestion", Phase.ALERT, "🤖🚨proj", id="question-while-agent-runs-alerts"),
    ],
)
def test_running_agent_during_real_time_mode(name: str, phase: Phase, window: str) -> None:
    decision = next_indicator(WORKING, tool(name), NOW)
    assert (decision.state.phase, decision.window_name) == (phase, window)
    assert decision.options[OPT_AGENT_RUNNING] == "true"


@pytest.mark.parametrize(
    ("options", "state"),
    [
        pytest.param({}, IDLE, id="nothing-set"),
        pytest.param({OPT_AGENT_RUNNING: "true"}, IndicatorState(Phase.WORKING, True), id="seed-running"),
        pytest.param(
            {OPT_AGENT_RUNNING: "false", OPT_LAST_COMPLETED: "1700"},
            IndicatorState(Phase.COMPLETED, last_completed=1700),
            id="seed-completed",
        ),
        pytest.param(
            {OPT_PHASE: "base", OPT_LAST_ACTIVE: "42"},
            IndicatorState(Phase.BASE, last_active=42),
            id="ours-base",
        ),
        pytest.param(
            {OPT_PHASE: "weird", OPT_LAST_COMPLETED: "soon", OPT_AGENT_RUNNING: "yes"}, IDLE, id="garbage"
        ),
    ],
)
def test_previous_state_from_options(options: dict[str, str], state: IndicatorState) -> None:
    assert previous_state(options) == state


@pytest.mark.parametrize(
    "state",
    [
        pytest.param(IDLE, id="idle"),
        pytest.param(WORKING, id="working"),
        pytest.param(COMPLETED, id="completed"),
        pytest.param(BASE, id="base"),
        pytest.param(IndicatorState(Phase.ALERT, True, 5, 6), id="alert"),
    ],
)
def test_options_round_trip(state: IndicatorState) -> None:
    assert previous_state(state_options(state)) == state


def test_snapshot_keeps_a_window_name_with_the_separator() -> None:
    snapshot = parse_snapshot("true|100|working|90|🤖⚙️a|b\n")
    assert snapshot.window_name == "🤖⚙️a|b"
    assert snapshot.options == {
        OPT_AGENT_RUNNING: "true",
        OPT_LAST_COMPLETED: "100",
        OPT_PHASE: "working",
        OPT_LAST_ACTIVE: "90",
    }


def test_commands_only_for_what_differs() -> None:
    decision = next_indicator(COMPLETED, stop("Task"), NOW)
    snapshot = WindowSnapshot(state_options(COMPLETED), "🤖✅proj")
    assert tmux_commands("%3", snapshot, decision) == [
        ["set-option", "-w", "-t", "%3", OPT_AGENT_RUNNING, "true"],
        ["set-option", "-w", "-t", "%3", OPT_PHASE, "working"],
        ["set-option", "-w", "-t", "%3", OPT_LAST_ACTIVE, str(NOW)],
        ["rename-window", "-t", "%3", "🤖⚙️proj"],
    ]
    settled = WindowSnapshot(dict(decision.options), "🤖⚙️proj")
    assert tmux_commands("%3", settled, decision) == []


def test_trailing_semicolon_of_a_name_is_escaped_for_tmux() -> None:
    decision = next_indicator(IDLE, HookInput("Stop", "odd;", turn_tools=("Edit",)), NOW)
    assert tmux_commands("%1", WindowSnapshot({}, ""), decision)[-1] == [
        "rename-window",
        "-t",
        "%1",
        "🤖✅odd\\;",
    ]


def _entry(kind: str, content: object, **extra: object) -> str:
    return json.dumps({"type": kind, "message": {"role": kind, "content": content}, **extra})


def _uses(*names: str) -> list[dict[str, object]]:
    return [{"type": "tool_use", "id": f"t{i}", "name": n, "input": {}} for i, n in enumerate(names)]


RESULT = [{"type": "tool_result", "tool_use_id": "t0", "content": "ok"}]


@pytest.mark.parametrize(
    ("lines", "tools"),
    [
        pytest.param(
            [
                _entry("user", "earlier prompt"),
                _entry("assistant", _uses("Write")),
                _entry("user", RESULT),
                _entry("user", "fix the bug"),
                _entry("assistant", [{"type": "text", "text": "looking"}, *_uses("Read")]),
                _entry("user", RESULT),
                _entry("assistant", _uses("Edit", "Bash")),
                _entry("user", RESULT),
                _entry("assistant", [{"type": "text", "text": "done"}]),
            ],
            ("Read", "Edit", "Bash"),
            id="tools-of-the-last-turn-only",
        ),
        pytest.param(
            [_entry("user", [{"type": "text", "text": "hi"}]), _entry("assistant", "hello")],
            (),
            id="prompt-as-text-blocks-no-tools",
        ),
        pytest.param(
            [
                _entry("user", "go"),
                _entry("assistant", _uses("Task")),
                _entry("assistant", _uses("Edit"), isSidechain=True),
                _entry("user", "subagent prompt", isSidechain=True),
                _entry("user", "caveat", isMeta=True),
                "not json",
                "",
                _entry("user", RESULT),
            ],
            ("Task",),
            id="sidechain-meta-and-garbage-skipped",
        ),
    ],
)
def test_turn_tools(lines: list[str], tools: tuple[str, ...]) -> None:
    assert turn_tools(reversed(lines)) == tools


@pytest.mark.parametrize(
    ("text", "ok"),
    [
        pytest.param("", False, id="empty"),
        pytest.param("{not json", False, id="broken"),
        pytest.param("[1, 2]", False, id="not-an-object"),
        pytest.param('{"hook_event_name": "Stop"}', True, id="object"),
    ],
)
def test_read_payload(text: str, ok: bool) -> None:
    assert (read_payload(text) is not None) is ok


@pytest.mark.parametrize(
    ("project_dir", "cwd", "name"),
    [
        pytest.param("/home/me/shop", "/home/me/shop/src", "shop", id="project-dir-wins"),
        pytest.param(None, "/home/me/shop/", "shop", id="cwd-with-slash"),
        pytest.param("", None, "", id="nothing"),
    ],
)
def test_project_name(project_dir: str | None, cwd: str | None, name: str) -> None:
    assert project_name(project_dir, cwd) == name
