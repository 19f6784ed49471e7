"""The operations a worker runs for commands that arrive on the bus: the same functions the CLI calls.

Each takes the runtime and the command's arguments and returns something JSON can carry.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from bus.errors import InvalidInput
from worker.agents import dialog_answer, lifecycle, teardown, views
from worker.agents.ownership import NotOwner, owner_of_args
from worker.agents.spawn import SpawnRequest, new_agent
from worker.agents.talk import look, press, screenshot, send
from worker.auto.loop import AutoLoops
from worker.git import merge
from worker.git.merge_queue import MergeQueue
from worker.service.runtime import Runtime
from worker.tasks import planning
from worker.tasks.assign import new_agent_for_task

Operation = Callable[[Runtime, dict[str, Any]], Any]


def _text(args: dict[str, Any], name: str) -> str:
    value = args.get(name)
    if not isinstance(value, str):
        raise InvalidInput(f"the command needs a text argument {name!r}")
    return value


def _optional(args: dict[str, Any], name: str) -> str | None:
    value = args.get(name)
    return value if isinstance(value, str) and value else None


def _new_agent(rt: Runtime, args: dict[str, Any]) -> Any:
    req = SpawnRequest(
        goal=_text(args, "goal"),
        name=_optional(args, "name"),
        manager=_optional(args, "manager"),
        worker=bool(args.get("worker")),
        no_worktree=bool(args.get("no_worktree")),
        model=_optional(args, "model"),
        project=_optional(args, "project"),
        task=_optional(args, "task"),
        caller=_optional(args, "caller"),
    )
    made = new_agent_for_task(rt, req) if req.task else new_agent(rt, req)
    return json.loads(made.to_json())


def _merged(rt: Runtime, args: dict[str, Any]) -> Any:
    done = merge.merge(rt, _text(args, "agent"), _optional(args, "into"))
    return {"agent": done.agent, "target": done.target, "sha": done.sha, "commits": done.commits}


def _auto_start(rt: Runtime, args: dict[str, Any]) -> Any:
    max_tasks = args.get("max_tasks")
    state = AutoLoops(rt).start(
        _text(args, "project"),
        worktrees=bool(args.get("worktrees")),
        max_tasks=max_tasks if isinstance(max_tasks, int) else 0,
        agent=_optional(args, "agent"),
    )
    return state.as_dict()


def _auto_stop(rt: Runtime, args: dict[str, Any]) -> Any:
    return AutoLoops(rt).stop(_text(args, "project"), _optional(args, "reason") or "").as_dict()


def _auto_pause(rt: Runtime, args: dict[str, Any]) -> Any:
    loops = AutoLoops(rt)
    return loops.pause(
        _text(args, "project"), _optional(args, "reason") or "", bool(args.get("interrupt"))
    ).as_dict()


def _queue_merge(rt: Runtime, args: dict[str, Any]) -> Any:
    req = MergeQueue(rt).request(_text(args, "agent"), _optional(args, "task"), _optional(args, "into"))
    return {"merge": req.id, "project": req.project, "branch": req.branch, "target": req.target}


OPERATIONS: dict[str, Operation] = {
    "new-agent": _new_agent,
    "send": lambda rt, a: send(rt, _text(a, "agent"), _text(a, "text"), _optional(a, "sender")).id,
    "keys": lambda rt, a: press(rt, _text(a, "agent"), *[str(k) for k in a.get("keys", [])]),
    "look": lambda rt, a: look(
        rt, _text(a, "agent"), a.get("lines") if isinstance(a.get("lines"), int) else None
    ),
    "screenshot": lambda rt, a: screenshot(rt, _text(a, "agent")).as_reply(),
    "answer": lambda rt, a: (
        dialog_answer.answer(rt, _text(a, "question"), _text(a, "text"), _optional(a, "sender")).id
    ),
    "kill": lambda rt, a: teardown.kill(rt, _text(a, "agent"), bool(a.get("force"))).id,
    "merge": _merged,
    "merge-check": lambda rt, a: merge.merge_check(rt, _text(a, "agent"), _optional(a, "into")),
    "approve": lambda rt, a: dialog_answer.approve(
        rt, _text(a, "agent"), bool(a.get("always")), _optional(a, "prompt")
    ),
    "deny": lambda rt, a: dialog_answer.deny(
        rt, _text(a, "agent"), _optional(a, "reason") or "", _optional(a, "prompt")
    ),
    "choose": lambda rt, a: dialog_answer.choose(
        rt, _text(a, "agent"), _text(a, "answer"), _optional(a, "prompt")
    ),
    "pause": lambda rt, a: lifecycle.pause(rt, _text(a, "agent")).id,
    "resume": lambda rt, a: lifecycle.resume(rt, _text(a, "agent")).message,
    "nuke": lambda rt, a: teardown.nuke(rt, _optional(a, "agent"), a.get("tree") is not False),
    "diff": lambda rt, a: views.diff_text(rt, _text(a, "agent"), bool(a.get("stat"))),
    "status": lambda rt, a: views.status_text(rt, _text(a, "agent")),
    "auto-start": _auto_start,
    "auto-stop": _auto_stop,
    "auto-pause": _auto_pause,
    "queue-merge": _queue_merge,
    "plan-start": lambda rt, a: planning.start(rt, _text(a, "goal"), _optional(a, "project")).as_dict(),
    "plan-approve": lambda rt, a: [t.id for t in planning.approve(rt, _text(a, "plan"))],
    "plan-edit": lambda rt, a: planning.edit(rt, _text(a, "plan"), _text(a, "changes")).as_dict(),
    "plan-discard": lambda rt, a: planning.discard(rt, _text(a, "plan")).as_dict(),
}


# These change only what is on the bus (the merge queue is worked by the agent's own worker), so any
# worker may run them; every other operation naming an agent runs on the agent's worker only.
BUS_ONLY = frozenset({"queue-merge"})


def run_operation(rt: Runtime, op: str, args: dict[str, Any]) -> Any:
    """Run `op` here; refused before anything happens when the agent it names is another worker's."""
    try:
        operation = OPERATIONS[op]
    except KeyError as e:
        raise InvalidInput(f"unknown command {op!r} (known: {', '.join(sorted(OPERATIONS))})") from e
    owner = owner_of_args(rt, args) if op not in BUS_ONLY else None
    if owner is not None and owner != rt.worker_id:
        raise NotOwner(f"{op}: the agent runs on worker {owner!r}, not on {rt.worker_id!r}; ask that worker")
    return operation(rt, args)
