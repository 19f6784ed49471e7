"""The signs of a runaway agent, pure: the same tool call with the same arguments N times in a row, a turn
with no file change and no new text for M minutes, fresh tokens burnt faster than a set rate.

`AgentCalls` keeps one agent's recent calls and its last sign of progress; the watchdog
(worker.budgets.watchdog) feeds it and acts on a `Finding`.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

CHANGING_TOOLS = frozenset({"Write", "Edit", "MultiEdit", "NotebookEdit"})
"""Tools whose call is a file change (a Bash call may change files too, but cannot be told from here)."""
SHOWN_CALLS = 10
"""How many of the last calls a `runaway` event lists."""


@dataclass(frozen=True)
class Call:
    """One tool call as the PreToolUse hook recorded it."""

    tool: str
    digest: str  # the same tool with the same arguments has the same digest
    summary: str
    at: float


@dataclass(frozen=True)
class Finding:
    """Why an agent looks like a runaway: the rule (repeat, quiet, burn), a line for people, its calls."""

    rule: str
    reason: str
    calls: tuple[Call, ...] = ()


@dataclass(frozen=True)
class Limits:
    """The watchdog's settings: repeats in a row, quiet minutes, fresh tokens per minute, and the span
    the rate is measured over (minutes)."""

    repeats: int = 6
    quiet_minutes: float = 20.0
    tokens_per_minute: int = 500_000
    burn_window: float = 5.0


@dataclass
class AgentCalls:
    """One agent's recent calls and when it last showed progress (a file change, new text, a new turn)."""

    keep: int = SHOWN_CALLS
    calls: deque[Call] = field(default_factory=deque)
    progress_at: float = 0.0

    def add(self, call: Call) -> None:
        self.calls.append(call)
        while len(self.calls) > max(self.keep, SHOWN_CALLS):
            self.calls.popleft()
        if call.tool in CHANGING_TOOLS:
            self.progress_at = max(self.progress_at, call.at)

    def forget(self, at: float) -> None:
        """The person said go on: earlier calls no longer count, and the quiet span starts again."""
        self.calls.clear()
        self.progress_at = max(self.progress_at, at)

    def last(self) -> tuple[Call, ...]:
        return tuple(self.calls)[-SHOWN_CALLS:]


def repeated(agent: AgentCalls, limits: Limits) -> Finding | None:
    """The same call (tool and arguments) `limits.repeats` times in a row, ending with the newest."""
    calls = list(agent.calls)
    if len(calls) < limits.repeats:
        return None
    tail = calls[-limits.repeats :]
    if any(c.digest != tail[-1].digest for c in tail):
        return None
    return Finding(
        "repeat",
        f"the same call {limits.repeats} times in a row: {tail[-1].summary}",
        agent.last(),
    )


def quiet(
    agent: AgentCalls, turn_started: float, text_at: float, now: float, limits: Limits
) -> Finding | None:
    """A turn under way for `limits.quiet_minutes` with no file change and no new text in that time."""
    since = max(agent.progress_at, turn_started, text_at)
    if not turn_started or now - since < limits.quiet_minutes * 60:
        return None
    minutes = (now - since) / 60
    return Finding(
        "quiet",
        f"no file change and no new text for {minutes:.0f} minutes of this turn",
        agent.last(),
    )


def burn_rate(usage: list[tuple[float, int]], now: float, window_minutes: float) -> float:
    """Fresh tokens per minute over the last `window_minutes`, from (answer time, fresh tokens)."""
    start = now - window_minutes * 60
    return sum(tokens for at, tokens in usage if at >= start) / window_minutes


def burning(agent: AgentCalls, usage: list[tuple[float, int]], now: float, limits: Limits) -> Finding | None:
    """Fresh tokens (input, output, cache writes) burnt faster than `limits.tokens_per_minute`."""
    rate = burn_rate(usage, now, limits.burn_window)
    if rate <= limits.tokens_per_minute:
        return None
    return Finding(
        "burn",
        f"{rate:,.0f} fresh tokens a minute over the last {limits.burn_window:g} minutes "
        f"(the limit is {limits.tokens_per_minute:,})",
        agent.last(),
    )


def event_data(finding: Finding) -> dict[str, object]:
    """The `runaway` event's data: the rule and the last calls, oldest first."""
    return {
        "rule": finding.rule,
        "reason": finding.reason,
        "calls": [{"tool": c.tool, "summary": c.summary, "at": round(c.at, 3)} for c in finding.calls],
    }


def pause_reason(finding: Finding) -> str:
    """What the PreToolUse hook tells Claude while the agent is paused."""
    return (
        f"Paused by ittybus's runaway watchdog: {finding.reason}. Stop here and wait: the person is asked "
        "to let you continue or to stop you. Do not retry the same call."
    )
