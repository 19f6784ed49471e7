"""Which worker owns an agent, and the check every operation on an agent makes first: only the agent's
own worker touches its tmux session and worktree; anywhere else the command goes to that worker."""

from __future__ import annotations

from bus.agent_store import Agent
from bus.worker_commands import Command
from worker.errors import WorkerError
from worker.runtime import Runtime


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


def owned(rt: Runtime, agent_id: str) -> Agent:
    """The agent's record, when this machine's worker owns it; NotOwner names the owner otherwise."""
    agent = rt.agents.get(agent_id)
    if owner(agent) != rt.worker_id:
        raise NotOwner(
            f"{agent.id} runs on worker {agent.worker!r}, not on this one ({rt.worker_id!r}): "
            "send the command to its worker (the ib commands do that for you)"
        )
    return agent


def owner_of(rt: Runtime, command: Command) -> str | None:
    """The worker that must run `command`: the owner of the agent it names, or of the agent that asked
    the question it answers (the command's `routed_by` says which); None when it names neither."""
    named = command.routing_id()
    if named is None:
        return None
    agent_id = rt.questions.get(named).agent if command.routed_by == "question" else named
    return owner(rt.agents.get(agent_id))
