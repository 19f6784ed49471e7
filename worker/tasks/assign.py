"""`ib new-agent --task ID`: the task is claimed for the new agent before the agent starts.

The agent's record carries the task (the Stop hook finishes it when the agent completes); a task that is
not ready, or that someone else holds, is refused with the reason and what to do.
"""

from __future__ import annotations

import contextlib
import secrets
from collections.abc import Callable
from dataclasses import replace

from bus.commands.worker_commands import NewAgent
from bus.errors import BusError, Conflict, InvalidInput
from bus.stores.agent_store import Agent
from bus.tasks.task_model import Task
from bus.wire.ids import validate_id
from worker.agents.spawn import SpawnRequest, new_agent
from worker.runtime import Runtime


def refusal(task: Task, agent_id: str) -> str:
    """Why `task` cannot go to a new agent `agent_id`, and what to do. Pure."""
    if task.status == "claimed":
        return (
            f"task {task.id} is claimed by {task.claimed_by}, not {agent_id}: "
            f"`ib task release {task.id}` first, or give the new agent another task"
        )
    if task.status == "pending":
        waits = ", ".join(task.after)
        return f"task {task.id} is pending (it waits for {waits}): give it to an agent once it is ready"
    if task.status == "draft":
        return f"task {task.id} is a draft: publish it first with `ib task edit {task.id} --publish`"
    return f"task {task.id} is {task.status}: there is nothing left to give an agent"


def take_for(rt: Runtime, task_id: str, agent_id: str) -> tuple[Task, bool]:
    """The task, now claimed for `agent_id`; True when this call claimed it, False when the agent held it."""
    task = rt.tasks.get(task_id)
    if task.status == "claimed" and task.claimed_by == agent_id:
        return task, False
    if task.status == "ready":
        claimed = rt.tasks.claim_task(task_id, agent_id)
        if claimed is not None:
            return claimed, True
        task = rt.tasks.get(task_id)  # someone else took it first
    raise Conflict(refusal(task, agent_id))


def task_goal(task: Task) -> str:
    """The goal of an agent given only a task: its title and body. Pure."""
    body = task.body.strip()
    return f"{task.title}\n\n{body}" if body else task.title


def new_agent_from_command(
    rt: Runtime, command: NewAgent, on_note: Callable[[str], None] | None = None
) -> Agent:
    """What `ib new-agent` and its command over the bus do: an agent for the task when it names one."""
    req = SpawnRequest.from_command(command, on_note)
    return new_agent_for_task(rt, req) if req.task else new_agent(rt, req)


def new_agent_for_task(rt: Runtime, req: SpawnRequest) -> Agent:
    """Spawn an agent for `req.task`: claim it for the agent, then start the agent; the claim is given
    back when the agent cannot be started. The task's project and text are the defaults."""
    if not req.task:
        raise InvalidInput("no task given: use `ib new-agent --task ID`")
    name = validate_id("agent", req.name) if req.name else f"agent-{secrets.token_hex(3)}"
    task, claimed_now = take_for(rt, validate_id("task", req.task), name)
    has_goal = bool(req.goal.strip() or req.prompt_file)
    req = replace(
        req,
        name=name,
        goal=req.goal if has_goal else task_goal(task),
        project=req.project or task.project,
        cli=req.cli or task.cli or None,
    )
    try:
        return new_agent(rt, req)
    except BaseException:
        if claimed_now:
            with contextlib.suppress(BusError):  # the spawn's error is the one to show
                rt.tasks.release(task.id)
        raise
