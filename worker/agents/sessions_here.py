"""This repository's agents as tmux sees them: found by their session names (`ib-<repo id>-<agent id>` on
the agents' tmux server), with no record read, so they can be counted and stopped while the bus is away.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from worker.agents.layout import SESSION_PREFIX, state_root
from worker.errors import SessionGone, TmuxError
from worker.tmux.client import Tmux


@dataclass(frozen=True)
class SessionsHere:
    """The agent sessions of one repository on one tmux server; `problem` says why none could be read."""

    prefix: str = ""
    names: tuple[str, ...] = ()
    problem: str = ""

    @property
    def agents(self) -> list[str]:
        return [name.removeprefix(self.prefix) for name in self.names]


def session_prefix(root: Path) -> str | None:
    """The prefix of this repository's agent session names; None when it never had an agent (no id yet)."""
    try:
        return f"{SESSION_PREFIX}-{(state_root(root) / 'repo-id').read_text().strip()}-"
    except OSError:
        return None


def sessions_here(tmux: Tmux, root: Path) -> SessionsHere:
    """The repository's agent sessions that run now; none when no tmux server (or no tmux) runs."""
    prefix = session_prefix(root)
    if prefix is None:
        return SessionsHere()
    try:
        return SessionsHere(prefix, tuple(tmux.sessions(prefix)))
    except TmuxError as e:
        return SessionsHere(prefix, problem=str(e))


def stop_sessions(tmux: Tmux, found: SessionsHere) -> list[str]:
    """Kill each session (and every process in it); the ids of the agents stopped."""
    stopped = []
    for name, agent in zip(found.names, found.agents, strict=True):
        try:
            tmux.kill_session(name)
        except SessionGone:
            continue  # it ended on its own meanwhile
        stopped.append(agent)
    return stopped
