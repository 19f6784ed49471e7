"""Which worker owns an agent, and the check every operation on an agent makes first: only the agent's
own worker touches its tmux session and worktree; anywhere else the command goes to that worker.

The record is read once, where a command comes in (`subject_of`), and passed down as an `AgentRef`: an
operation given a record checks it as it is, one given an id reads it then."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bus.stores.agent_store import Agent
from worker.errors import WorkerError
from worker.runtime import Runtime

if TYPE_CHECKING:  # pydantic's command models load with the commands, not with every reader of agents
    from bus.commands.worker_commands import Command


class NotOwner(WorkerError):
    """The agent runs on another machine: its worker, not this one, must act on it."""


class OwnerUnknown(WorkerError):
    """The agent's record names no worker, so no machine can act on it."""


def owner(agent: Agent) -> str:
    if not agent.worker:
        raise OwnerUnknown(
            f"{agent.id} has no worker on record, so no machine can act on it; "
            f"`ib info {agent.id}` shows what is known"
        )
    return agent.worker


AgentRef = Agent | str
"""An agent as an operation takes it: its record, read once where the command came in, or its id."""


def owned(rt: Runtime, ref: AgentRef) -> Agent:
    """The agent's record, when this machine's worker owns it; NotOwner names the owner otherwise. Redis
    is read only when `ref` is an id."""
    agent = ref if isinstance(ref, Agent) else rt.agents.get(ref)
    if owner(agent) != rt.worker_id:
        raise NotOwner(
            f"{agent.id} runs on worker {agent.worker!r}, not on this one ({rt.worker_id!r}): "
            "send the command to its worker (the ib commands do that for you)"
        )
    return agent


def subject_of(rt: Runtime, command: Command) -> Agent | None:
    """The record of the agent `command` acts on: the one it names, or the one that asked the question it
    answers (the command's `routed_by` says which); None when it names neither. Its worker runs it."""
    named = command.routing_id()
    if named is None:
        return None
    agent_id = rt.questions.get(named).agent if command.routed_by == "question" else named
    return rt.agents.get(agent_id)
