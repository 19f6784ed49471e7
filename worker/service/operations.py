"""The operations a worker runs for commands (bus.commands.worker_commands), whether they come from this
machine's CLI or over the bus: the same functions either way.

Each takes the runtime and its command and returns something JSON can carry; `@operation(Kind)`
registers it for its command type (`@on_agent(Kind)` for a command on one agent: it gets the agent's
record too), and `run_operation` picks it by the command's type.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from enum import Enum
from typing import Any, TypeVar

from bus.commands import worker_commands as cmd
from bus.commands.worker_commands import Command
from bus.stores.agent_store import Agent
from worker.agents.ownership import NotOwner, owner, subject_of
from worker.errors import WorkerError
from worker.runtime import Runtime

# Each operation imports what it runs: the CLI runs one command here per process, and loading every
# area (tmux, git, merges, review, /auto, planning) for it would cost more than the command itself.

C = TypeVar("C", bound=Command)
Operation = Callable[[Runtime, C], Any]
OnAgent = Callable[[Runtime, C, Agent], Any]
Registered = Callable[[Runtime, Any, Agent | None], Any]

OPERATIONS: dict[type[Command], Registered] = {}

ANSWERS = (cmd.Approve, cmd.Deny, cmd.Choose, cmd.Answer, cmd.Send)
"""Commands that answer what an agent waits for (from the CLI, a Telegram button or reply): once one
has run, whatever the agent waited on a person for is answered (bus.inbox.attention)."""


class _Unread(Enum):
    TOKEN = 0


UNREAD = _Unread.TOKEN
"""No record read yet: `run_operation` reads the command's agent itself."""


class NoOperation(WorkerError):
    """A command type with no operation registered for it: a bug in this module."""


def operation(kind: type[C]) -> Callable[[Operation[C]], Operation[C]]:
    """Register the function below as the operation that runs commands of type `kind`."""

    def register(run: Operation[C]) -> Operation[C]:
        OPERATIONS[kind] = lambda rt, command, _agent: run(rt, command)
        return run

    return register


def on_agent(kind: type[C]) -> Callable[[OnAgent[C]], OnAgent[C]]:
    """Register the function below for `kind`, a command on one agent: it gets the agent's record, read
    and checked once where the command came in, so nothing under it reads it again."""

    def register(run: OnAgent[C]) -> OnAgent[C]:
        def with_record(rt: Runtime, command: C, agent: Agent | None) -> Any:
            if agent is None:
                raise NoOperation(f"{command.op}: names no agent, so there is none to act on")
            return run(rt, command, agent)

        OPERATIONS[kind] = with_record
        return run

    return register


@operation(cmd.NewAgent)
def _new_agent(rt: Runtime, c: cmd.NewAgent) -> Any:
    from worker.tasks.assign import new_agent_from_command

    return json.loads(new_agent_from_command(rt, c).to_json())


@on_agent(cmd.Send)
def _send(rt: Runtime, c: cmd.Send, agent: Agent) -> str:
    from worker.agents.talk import send

    return send(rt, agent, c.text, c.sender).id


@on_agent(cmd.PressKeys)
def _press(rt: Runtime, c: cmd.PressKeys, agent: Agent) -> Any:
    from worker.agents.talk import press

    return press(rt, agent, *c.keys)


@on_agent(cmd.Look)
def _look(rt: Runtime, c: cmd.Look, agent: Agent) -> Any:
    from worker.agents.talk import look

    return look(rt, agent, c.lines)


@on_agent(cmd.TakeScreenshot)
def _screenshot(rt: Runtime, c: cmd.TakeScreenshot, agent: Agent) -> Any:
    from worker.agents.talk import screenshot

    return screenshot(rt, agent).as_reply()


@operation(cmd.Answer)
def _answer(rt: Runtime, c: cmd.Answer) -> str:
    from worker.agents import dialog_answer

    return dialog_answer.answer(rt, c.question, c.text, c.sender).id


@on_agent(cmd.Kill)
def _kill(rt: Runtime, c: cmd.Kill, agent: Agent) -> str:
    from worker.agents import teardown

    return teardown.kill(rt, agent, c.force).id


@on_agent(cmd.Merge)
def _merge(rt: Runtime, c: cmd.Merge, agent: Agent) -> Any:
    from worker.merges import land

    done = land.merge(rt, agent, c.into)
    return {"agent": done.agent, "target": done.target, "sha": done.sha, "commits": done.commits}


@on_agent(cmd.MergeCheck)
def _merge_check(rt: Runtime, c: cmd.MergeCheck, agent: Agent) -> Any:
    from worker.merges import land

    return land.merge_check(rt, agent, c.into)


@on_agent(cmd.Approve)
def _approve(rt: Runtime, c: cmd.Approve, agent: Agent) -> Any:
    from worker.agents import dialog_answer

    return dialog_answer.approve(rt, agent, c.always, c.prompt)


@on_agent(cmd.Deny)
def _deny(rt: Runtime, c: cmd.Deny, agent: Agent) -> Any:
    from worker.agents import dialog_answer

    return dialog_answer.deny(rt, agent, c.reason, c.prompt)


@on_agent(cmd.Choose)
def _choose(rt: Runtime, c: cmd.Choose, agent: Agent) -> Any:
    from worker.agents import dialog_answer

    return dialog_answer.choose(rt, agent, c.answer, c.prompt)


@on_agent(cmd.Pause)
def _pause(rt: Runtime, c: cmd.Pause, agent: Agent) -> str:
    from worker.agents import lifecycle

    return lifecycle.pause(rt, agent).id


@on_agent(cmd.Resume)
def _resume(rt: Runtime, c: cmd.Resume, agent: Agent) -> Any:
    from worker.agents import lifecycle

    return lifecycle.resume(rt, agent).message


@operation(cmd.Nuke)
def _nuke(rt: Runtime, c: cmd.Nuke) -> Any:
    from worker.agents import teardown

    return teardown.nuke(rt, c.agent, c.tree)


@on_agent(cmd.Diff)
def _diff(rt: Runtime, c: cmd.Diff, agent: Agent) -> Any:
    from worker.agents import views

    return views.diff_text(rt, agent, c.stat)


@on_agent(cmd.DiffReview)
def _diff_review(rt: Runtime, c: cmd.DiffReview, agent: Agent) -> Any:
    from worker.review.review import review

    return review(rt, agent, c.pictures)


@on_agent(cmd.Status)
def _status(rt: Runtime, c: cmd.Status, agent: Agent) -> Any:
    from worker.agents import views

    return views.status_text(rt, agent)


@operation(cmd.AutoStart)
def _auto_start(rt: Runtime, c: cmd.AutoStart) -> Any:
    from worker.auto.loop import AutoLoops

    state = AutoLoops(rt).start(c.project, worktrees=c.worktrees, max_tasks=c.max_tasks, agent=c.agent)
    return state.as_dict()


@operation(cmd.AutoStop)
def _auto_stop(rt: Runtime, c: cmd.AutoStop) -> Any:
    from worker.auto.loop import AutoLoops

    return AutoLoops(rt).stop(c.project, c.reason).as_dict()


@operation(cmd.AutoPause)
def _auto_pause(rt: Runtime, c: cmd.AutoPause) -> Any:
    from worker.auto.loop import AutoLoops

    return AutoLoops(rt).pause(c.project, c.reason, c.interrupt).as_dict()


@operation(cmd.QueueMerge)
def _queue_merge(rt: Runtime, c: cmd.QueueMerge) -> Any:
    from worker.merges.merge_queue import MergeQueue

    queue = MergeQueue(rt)
    req = queue.request(c.agent, c.task, c.into)
    place = queue.store.place(req)  # read before this worker can take it (it answers this command first)
    return {
        "merge": req.id,
        "project": req.project,
        "branch": req.branch,
        "target": req.target,
        "position": place,
    }


@operation(cmd.PlanStart)
def _plan_start(rt: Runtime, c: cmd.PlanStart) -> Any:
    from worker.tasks import planning

    return planning.start(rt, c.goal, c.project).as_dict()


@operation(cmd.PlanApprove)
def _plan_approve(rt: Runtime, c: cmd.PlanApprove) -> Any:
    from worker.tasks import planning

    return [t.id for t in planning.approve(rt, c.plan)]


@operation(cmd.PlanEdit)
def _plan_edit(rt: Runtime, c: cmd.PlanEdit) -> Any:
    from worker.tasks import planning

    return planning.edit(rt, c.plan, c.changes).as_dict()


@operation(cmd.PlanDiscard)
def _plan_discard(rt: Runtime, c: cmd.PlanDiscard) -> Any:
    from worker.tasks import planning

    return planning.discard(rt, c.plan).as_dict()


def run_operation(
    rt: Runtime, command: Command, subject: Agent | _Unread | None = UNREAD, *, sender: str = ""
) -> Any:
    """Run `command` here; refused before anything happens when the agent it names is another worker's
    (unless it changes only the bus, as queueing a merge does: the agent's own worker works the queue).
    `subject` is the command's agent when the caller read it already (route.run_on_owner): read once.
    `sender` (`telegram:<user>`, `ib@<worker>`) is who sent it, for the record of an answer."""
    run = OPERATIONS.get(type(command))
    if run is None:
        raise NoOperation(f"{command.op}: this worker has no operation for it")
    if subject is UNREAD:
        subject = None if command.bus_only else subject_of(rt, command)
    runs_on = None if subject is None or command.bus_only else owner(subject)
    if runs_on is not None and runs_on != rt.worker_id:
        raise NotOwner(
            f"{command.op}: the agent runs on worker {runs_on!r}, not on {rt.worker_id!r}; ask that worker"
        )
    result = run(rt, command, subject)
    if isinstance(command, ANSWERS) and isinstance(subject, Agent):
        rt.attention.answer(subject.id, f"{command.op} by {sender}" if sender else command.op)
    return result
