"""The agent programs by name (`--cli`, IB_DEFAULT_CLI, the agent record's `program`), and the checks a
spawn makes before it makes anything: a known name, an installed binary, a finished implementation, a
tested version."""

from __future__ import annotations

from collections.abc import Callable

from bus.settings.defaults import AGENT_PROGRAMS
from bus.stores.agent_store import Agent
from worker.programs.claude.program import ClaudeCode
from worker.programs.codex.program import CodexCli
from worker.programs.gemini.program import GeminiCli
from worker.programs.program import (
    AgentProgram,
    ProgramMissing,
    ProgramUnfinished,
    UnknownProgram,
    version_warning,
)

DEFAULT = AGENT_PROGRAMS[0]
# one for each name of AGENT_PROGRAMS, which the settings check IB_DEFAULT_CLI with (a test holds them equal)
PROGRAMS: dict[str, AgentProgram] = {p.name: p for p in (ClaudeCode(), CodexCli(), GeminiCli())}


def known() -> tuple[str, ...]:
    return tuple(PROGRAMS)


def program(name: str | None, option: str = "--cli") -> AgentProgram:
    """The program `name` names ("" or None: Claude Code, the records made before there was a choice);
    UnknownProgram lists the known ones."""
    try:
        return PROGRAMS[name or DEFAULT]
    except KeyError:
        raise UnknownProgram(
            f"{option} {name!r} is not an agent program ittybus knows; use one of: {', '.join(PROGRAMS)}"
        ) from None


def program_of(agent: Agent) -> AgentProgram:
    """The program an agent runs, from its record."""
    return program(agent.program, option="the agent's program")


def check_startable(p: AgentProgram, command: str, warn: Callable[[str], None]) -> None:
    """Refuse a program that is not installed (saying how to install it) or not finished; `warn` hears
    of a version outside the tested range, which still starts."""
    problem = p.missing(command)
    if problem is not None:
        raise ProgramMissing(problem)
    unfinished = p.unfinished()
    if unfinished is not None:
        raise ProgramUnfinished(unfinished)
    warning = version_warning(p, p.version(command))
    if warning is not None:
        warn(warning)
