"""The operations a worker runs for commands (bus.worker_commands), whether they come from this
machine's CLI or over the bus: the same functions either way.

Each takes the runtime and its command and returns something JSON can carry; `@operation(Kind)`
registers it for its command type, and `run_operation` picks it by the command's type.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, TypeVar

from bus import worker_commands as cmd
from bus.worker_commands import Command
from worker.agents import dialog_answer, lifecycle, teardown, views
from worker.agents.ownership import NotOwner, owner_of
from worker.agents.talk import look, press, screenshot, send
from worker.auto.loop import AutoLoops
from worker.errors import WorkerError
from worker.merges import land
from worker.merges.merge_queue import MergeQueue
from worker.runtime import Runtime
from worker.tasks import planning
from worker.tasks.assign import new_agent_from_command

C = TypeVar("C", bound=Command)
Operation = Callable[[Runtime, C], Any]

OPERATIONS: dict[type[Command], Operation[Any]] = {}


class NoOperation(WorkerError):
    """A command type with no operation registered for it: a bug in this module."""


def operation(kind: type[C]) -> Callable[[Operation[C]], Operation[C]]:
    """Register the function below as the operation that runs commands of type `kind`."""

    def register(run: Operation[C]) -> Operation[C]:
        OPERATIONS[kind] = run
        return run

    return register


@operation(cmd.NewAgent)
def _new_agent(rt: Runtime, c: cmd.NewAgent) -> Any:
    return json.loads(new_agent_from_command(rt, c).to_json())


@operation(cmd.Send)
def _send(rt: Runtime, c: cmd.Send) -> str:
    return send(rt, c.agent, c.text, c.sender).id


@operation(cmd.PressKeys)
def _press(rt: Runtime, c: cmd.PressKeys) -> Any:
    return press(rt, c.agent, *c.keys)


@operation(cmd.Look)
def _look(rt: Runtime, c: cmd.Look) -> Any:
    return look(rt, c.agent, c.lines)


@operation(cmd.TakeScreenshot)
def _screenshot(rt: Runtime, c: cmd.TakeScreenshot) -> Any:
    return screenshot(rt, c.agent).as_reply()


@operation(cmd.Answer)
def _answer(rt: Runtime, c: cmd.Answer) -> str:
    return dialog_answer.answer(rt, c.question, c.text, c.sender).id


@operation(cmd.Kill)
def _kill(rt: Runtime, c: cmd.Kill) -> str:
    return teardown.kill(rt, c.agent, c.force).id


@operation(cmd.Merge)
def _merge(rt: Runtime, c: cmd.Merge) -> Any:
    done = land.merge(rt, c.agent, c.into)
    return {"agent": done.agent, "target": done.target, "sha": done.sha, "commits": done.commits}


@operation(cmd.MergeCheck)
def _merge_check(rt: Runtime, c: cmd.MergeCheck) -> Any:
    return land.merge_check(rt, c.agent, c.into)


@operation(cmd.Approve)
def _approve(rt: Runtime, c: cmd.Approve) -> Any:
    return dialog_answer.approve(rt, c.agent, c.always, c.prompt)


@operation(cmd.Deny)
def _deny(rt: Runtime, c: cmd.Deny) -> Any:
    return dialog_answer.deny(rt, c.agent, c.reason, c.prompt)


@operation(cmd.Choose)
def _choose(rt: Runtime, c: cmd.Choose) -> Any:
    return dialog_answer.choose(rt, c.agent, c.answer, c.prompt)


@operation(cmd.Pause)
def _pause(rt: Runtime, c: cmd.Pause) -> str:
    return lifecycle.pause(rt, c.agent).id


@operation(cmd.Resume)
def _resume(rt: Runtime, c: cmd.Resume) -> Any:
    return lifecycle.resume(rt, c.agent).message


@operation(cmd.Nuke)
def _nuke(rt: Runtime, c: cmd.Nuke) -> Any:
    return teardown.nuke(rt, c.agent, c.tree)


@operation(cmd.Diff)
def _diff(rt: Runtime, c: cmd.Diff) -> Any:
    return views.diff_text(rt, c.agent, c.stat)


@operation(cmd.Status)
def _status(rt: Runtime, c: cmd.Status) -> Any:
    return views.status_text(rt, c.agent)


@operation(cmd.AutoStart)
def _auto_start(rt: Runtime, c: cmd.AutoStart) -> Any:
    state = AutoLoops(rt).start(c.project, worktrees=c.worktrees, max_tasks=c.max_tasks, agent=c.agent)
    return state.as_dict()


@operation(cmd.AutoStop)
def _auto_stop(rt: Runtime, c: cmd.AutoStop) -> Any:
    return AutoLoops(rt).stop(c.project, c.reason).as_dict()


@operation(cmd.AutoPause)
def _auto_pause(rt: Runtime, c: cmd.AutoPause) -> Any:
    return AutoLoops(rt).pause(c.project, c.reason, c.interrupt).as_dict()


@operation(cmd.QueueMerge)
def _queue_merge(rt: Runtime, c: cmd.QueueMerge) -> Any:
    req = MergeQueue(rt).request(c.agent, c.task, c.into)
    return {"merge": req.id, "project": req.project, "branch": req.branch, "target": req.target}


@operation(cmd.PlanStart)
def _plan_start(rt: Runtime, c: cmd.PlanStart) -> Any:
    return planning.start(rt, c.goal, c.project).as_dict()


@operation(cmd.PlanApprove)
def _plan_approve(rt: Runtime, c: cmd.PlanApprove) -> Any:
    return [t.id for t in planning.approve(rt, c.plan)]


@operation(cmd.PlanEdit)
def _plan_edit(rt: Runtime, c: cmd.PlanEdit) -> Any:
    return planning.edit(rt, c.plan, c.changes).as_dict()


@operation(cmd.PlanDiscard)
def _plan_discard(rt: Runtime, c: cmd.PlanDiscard) -> Any:
    return planning.discard(rt, c.plan).as_dict()


def run_operation(rt: Runtime, command: Command) -> Any:
    """Run `command` here; refused before anything happens when the agent it names is another worker's
    (unless it changes only the bus, as queueing a merge does: the agent's own worker works the queue)."""
    run = OPERATIONS.get(type(command))
    if run is None:
        raise NoOperation(f"{command.op}: this worker has no operation for it")
    owner = None if command.bus_only else owner_of(rt, command)
    if owner is not None and owner != rt.worker_id:
        raise NotOwner(
            f"{command.op}: the agent runs on worker {owner!r}, not on {rt.worker_id!r}; ask that worker"
        )
    return run(rt, command)
