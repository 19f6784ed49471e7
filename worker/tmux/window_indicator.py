"""The tmux window-name indicator of a Claude Code session: its states, the transition on each hook event,
the tool emojis of real-time mode, and the reading and writing of the tmux user options that carry the state
between two hook runs. Pure: the hook shell (worker/hooks/tmux_status.py) does the tmux calls."""

from __future__ import annotations

import json
import posixpath
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from enum import StrEnum

TIMEOUT_SECONDS = 1800
"""COMPLETED and BASE fall back to IDLE once strictly more than this passed: 1800 s stays, 1801 s goes."""

ROBOT = "🤖"
DONE_MARK = "✅"
WORKING_MARK = "⚙️"
ALERT_MARK = "🚨"
OTHER_TOOL_MARK = "💎"

TASK_TOOLS = frozenset({"Task", "Agent"})  # the subagent tool; some Claude Code versions call it "Agent"
TASK_OUTPUT_TOOL = "TaskOutput"
QUESTION_TOOL = "AskUserQuestion"
NO_WORK_TOOLS = frozenset(
    {
        "Read",
        "Grep",
        "Glob",
        "LS",
        "NotebookRead",
        "WebFetch",
        "WebSearch",
        "TodoWrite",
        "ExitPlanMode",
        QUESTION_TOOL,
    }
)
"""Tools that look, search or plan: a turn that used only these leaves no visible work (BASE)."""

TOOL_MARKS: Mapping[str, str] = {
    "Edit": "✏️",
    "MultiEdit": "✏️",
    "NotebookEdit": "✏️",
    "Bash": "🧪",
    "Read": "🔍",
    "Grep": "🔍",
    "Glob": "🔍",
    "LS": "🔍",
    "TodoWrite": "⚙️",
    "WebFetch": "🌐",
    "WebSearch": "🌐",
    "Write": "📝",
    "Skill": "🎯",
    "Task": "🎯",
    "Agent": "🎯",
    "SlashCommand": "⚡",
    TASK_OUTPUT_TOOL: "📤",
    QUESTION_TOOL: ALERT_MARK,
}

OPT_AGENT_RUNNING = "@agent_running"
OPT_LAST_COMPLETED = "@last_completed_time"
OPT_PHASE = "@ib_indicator"
OPT_LAST_ACTIVE = "@ib_last_active_time"
OPTIONS = (OPT_AGENT_RUNNING, OPT_LAST_COMPLETED, OPT_PHASE, OPT_LAST_ACTIVE)

SNAPSHOT_FORMAT = "|".join(f"#{{{name}}}" for name in OPTIONS) + "|#{window_name}"
"""`display-message -p` format that reads the options and the window name in one call; the name goes last
because it is the only field that may itself contain the separator."""


class Phase(StrEnum):
    """The four states of the Stop-only machine, and ACTIVE and ALERT of real-time mode."""

    IDLE = "idle"
    WORKING = "working"
    COMPLETED = "completed"
    BASE = "base"
    ACTIVE = "active"
    ALERT = "alert"


@dataclass(frozen=True)
class IndicatorState:
    """The state of one window, as kept in its tmux user options (times are whole epoch seconds)."""

    phase: Phase = Phase.IDLE
    agent_running: bool = False
    last_completed: int | None = None
    last_active: int | None = None


@dataclass(frozen=True)
class HookInput:
    """One hook event, as the indicator needs it; `turn_tools` are the tools of the turn a Stop ends."""

    event: str
    project: str
    tool_name: str | None = None
    turn_tools: tuple[str, ...] = ()


@dataclass(frozen=True)
class IndicatorDecision:
    """What to write back: the new state, its options, and the window name (None: leave the name alone)."""

    state: IndicatorState
    options: Mapping[str, str]
    window_name: str | None


@dataclass(frozen=True)
class WindowSnapshot:
    """The option values and the window name as tmux reported them ("" for an option never set)."""

    options: Mapping[str, str]
    window_name: str


def next_indicator(prev: IndicatorState, event: HookInput, now: float) -> IndicatorDecision:
    """The transition for one hook event: timeouts first, then Stop or PostToolUse (others only tick)."""
    at = int(now)
    current = expire(prev, at)
    if event.event == "Stop":
        state = after_stop(current, event.turn_tools, at)
    elif event.event == "PostToolUse" and event.tool_name:
        state = after_tool(current, event.tool_name, at)
    else:  # any other event only ticks the clock: rename only when a timeout changed the state
        name = window_name(current, event.project) if current != prev else None
        return IndicatorDecision(current, state_options(current), name)
    return IndicatorDecision(state, state_options(state), window_name(state, event.project, event.tool_name))


def expire(state: IndicatorState, at: int) -> IndicatorState:
    """COMPLETED → IDLE and BASE → IDLE after the timeout; a missing timestamp counts as expired."""
    if state.phase is Phase.COMPLETED:
        started = state.last_completed
    elif state.phase is Phase.BASE:
        started = state.last_active
    else:
        return state
    if started is not None and at - started <= TIMEOUT_SECONDS:
        return state
    return replace(state, phase=Phase.IDLE, last_completed=None)


def after_stop(state: IndicatorState, tools: Iterable[str], at: int) -> IndicatorState:
    """End of a turn: a Task launched → WORKING; an agent was running or visible work done → COMPLETED;
    nothing visible → BASE, except that COMPLETED keeps its completion until it times out."""
    used = set(tools)
    if used & TASK_TOOLS:
        return replace(state, phase=Phase.WORKING, agent_running=True, last_active=at)
    if state.agent_running or state.phase is Phase.WORKING or used - NO_WORK_TOOLS:
        return IndicatorState(Phase.COMPLETED, agent_running=False, last_completed=at, last_active=at)
    if state.phase is Phase.COMPLETED:
        return replace(state, last_active=at)
    return IndicatorState(Phase.BASE, agent_running=False, last_completed=None, last_active=at)


def after_tool(state: IndicatorState, tool: str, at: int) -> IndicatorState:
    """Real-time mode (PostToolUse): a Task starts an agent, a TaskOutput collects it, a question alerts,
    any other tool shows its emoji."""
    if tool in TASK_TOOLS:
        return replace(state, phase=Phase.WORKING, agent_running=True, last_active=at)
    if tool == TASK_OUTPUT_TOOL and state.agent_running:
        return IndicatorState(Phase.COMPLETED, agent_running=False, last_completed=at, last_active=at)
    phase = Phase.ALERT if tool == QUESTION_TOOL else Phase.ACTIVE
    return replace(state, phase=phase, last_active=at)


def tool_mark(tool: str) -> str:
    """The emoji real-time mode shows while `tool` runs."""
    return TOOL_MARKS.get(tool, OTHER_TOOL_MARK)


def window_name(state: IndicatorState, project: str, tool: str | None = None) -> str:
    """`🤖✅<project>` idle or completed, `🤖⚙️<project>` working, `🤖<project>` base, `🤖<tool><project>`
    active, `🤖🚨<project>` alert. A running agent keeps ⚙️ while the parent session goes on using tools."""
    marks = {
        Phase.IDLE: DONE_MARK,
        Phase.COMPLETED: DONE_MARK,
        Phase.WORKING: WORKING_MARK,
        Phase.BASE: "",
        Phase.ALERT: ALERT_MARK,
    }
    if state.phase is Phase.ACTIVE:
        mark = WORKING_MARK if state.agent_running else tool_mark(tool or "")
    else:
        mark = marks[state.phase]
    return f"{ROBOT}{mark}{project}"


def state_options(state: IndicatorState) -> dict[str, str]:
    """The tmux user options that store `state`."""
    return {
        OPT_AGENT_RUNNING: "true" if state.agent_running else "false",
        OPT_LAST_COMPLETED: _epoch_text(state.last_completed),
        OPT_PHASE: state.phase.value,
        OPT_LAST_ACTIVE: _epoch_text(state.last_active),
    }


def previous_state(options: Mapping[str, str]) -> IndicatorState:
    """Read the state back from the options. Without our phase option (first run, or options left by the
    seed's shell hook) the phase comes from `@agent_running` and `@last_completed_time` alone."""
    running = options.get(OPT_AGENT_RUNNING, "").strip() == "true"
    last_completed = _epoch(options.get(OPT_LAST_COMPLETED, ""))
    try:
        phase = Phase(options.get(OPT_PHASE, "").strip())
    except ValueError:
        phase = Phase.WORKING if running else Phase.COMPLETED if last_completed is not None else Phase.IDLE
    return IndicatorState(phase, running, last_completed, _epoch(options.get(OPT_LAST_ACTIVE, "")))


def parse_snapshot(output: str) -> WindowSnapshot:
    """Parse the output of `display-message -p SNAPSHOT_FORMAT`."""
    fields = output.rstrip("\r\n").split("|", len(OPTIONS))
    fields += [""] * (len(OPTIONS) + 1 - len(fields))
    return WindowSnapshot(dict(zip(OPTIONS, fields, strict=False)), fields[len(OPTIONS)])


def tmux_commands(target: str, snapshot: WindowSnapshot, decision: IndicatorDecision) -> list[list[str]]:
    """The tmux commands that bring the window from `snapshot` to `decision`, only for what differs."""
    commands = [
        ["set-option", "-w", "-t", target, name, value]
        for name, value in decision.options.items()
        if snapshot.options.get(name, "") != value
    ]
    name = decision.window_name
    if name is not None and name != snapshot.window_name:
        # tmux takes an argument ending in ";" for a command separator unless the ";" is escaped
        commands.append(["rename-window", "-t", target, name[:-1] + "\\;" if name.endswith(";") else name])
    return commands


def read_payload(text: str) -> dict[str, object] | None:
    """The hook payload as a JSON object, or None when it is empty or not a JSON object."""
    try:
        payload = json.loads(text)
    except ValueError:
        return None
    return payload if isinstance(payload, dict) else None


def project_name(project_dir: str | None, cwd: str | None) -> str:
    """The project in the window name: the last part of Claude Code's project folder, else of the cwd."""
    for path in (project_dir, cwd):
        name = posixpath.basename((path or "").rstrip("/"))
        if name:
            return name
    return ""


def turn_tools(lines_newest_first: Iterable[str]) -> tuple[str, ...]:
    """The tools the main session used in its last turn, oldest first, from transcript JSONL lines read
    backwards. Stops at the prompt that opened the turn; subagent (sidechain) entries are not the turn's."""
    names: list[str] = []
    for line in lines_newest_first:
        entry = _json_object(line)
        if entry is None or entry.get("isSidechain") is True:
            continue
        message = entry.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        if entry.get("type") == "assistant" and isinstance(content, list):
            names.extend(reversed(_tool_uses(content)))
        elif entry.get("type") == "user" and not entry.get("isMeta") and _is_prompt(content):
            break
    return tuple(reversed(names))


def _tool_uses(content: list[object]) -> list[str]:
    return [
        str(item["name"])
        for item in content
        if isinstance(item, dict) and item.get("type") == "tool_use" and isinstance(item.get("name"), str)
    ]


def _is_prompt(content: object) -> bool:
    """A user entry opens a turn unless it only carries tool results back to the model."""
    if isinstance(content, str):
        return True
    if isinstance(content, list):
        return any(not (isinstance(item, dict) and item.get("type") == "tool_result") for item in content)
    return False


def _json_object(line: str) -> dict[str, object] | None:
    try:
        value = json.loads(line)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _epoch(text: str) -> int | None:
    text = text.strip()
    return int(text) if text.isdigit() else None


def _epoch_text(value: int | None) -> str:
    return "" if value is None else str(value)
