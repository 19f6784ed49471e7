"""Which worker owns an agent, and the check every operation on an agent makes first: only the agent's
own worker touches its tmux session and worktree; anywhere else the command goes to that worker."""

from __future__ import annotations

from typing import Any

from bus.agents import Agent
from worker.errors import WorkerError
from worker.service.runtime import Runtime


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


def owner_of_args(rt: Runtime, args: dict[str, Any]) -> str | None:
    """The worker that must run an operation with these arguments: the owner of the agent it names
    (`agent`), or of the agent that asked the question it answers (`question`); None for neither."""
    agent_id = args.get("agent")
    question_id = args.get("question")
    if not (isinstance(agent_id, str) and agent_id) and isinstance(question_id, str) and question_id:
        agent_id = rt.questions.get(question_id).agent
    if not (isinstance(agent_id, str) and agent_id):
        return None
    return owner(rt.agents.get(agent_id))
