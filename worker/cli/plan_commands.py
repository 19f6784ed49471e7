"""`ib plan GOAL`: a planner agent turns a goal into a task graph; the tree is printed, `--yes` adds it.

Without `--yes` the plan stays a draft: `ib plan-approve`, `ib plan-edit` (changes go back to the same
planner) and `ib plan-discard` act on it later, as the Approve / Edit / Discard buttons do in Telegram.
"""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, cast

import typer

from bus.events.envelope import EVENT_FIELD
from worker.cli import values
from worker.cli.context import Context
from worker.errors import WorkerError
from worker.runtime import Runtime

if TYPE_CHECKING:
    import redis

    from bus.tasks.plan_store import PlanDraft


class PlanFailed(WorkerError):
    """The planner's answer was refused, or it gave none in time."""


def plan(
    goal: list[str] = typer.Argument(..., help="what to plan, in words"),
    project: str = typer.Option(None, "--project", help="project (default: the repository's name)"),
    yes: bool = typer.Option(False, "--yes", "-y", help="add the tasks at once when the plan is valid"),
    timeout: float = typer.Option(
        None, "--timeout", callback=values.seconds, help="seconds to wait (default IB_PLAN_TIMEOUT)"
    ),
) -> None:
    """Ask a planner agent for a task graph; print it as a tree, and with --yes add its tasks.

    Example: ib plan "add rate limiting to the API" --yes
    """
    from bus.tasks.plans import render_tree
    from worker.tasks import planning

    ctx = Context()
    rt = ctx.runtime
    since = _last_event_id(rt)
    draft = planning.start(rt, " ".join(goal), project)
    print(f"{draft.id}: planner {draft.agent} is at work (it writes plan.json in its worktree)", flush=True)
    limit = timeout if timeout is not None else ctx.settings.plan_timeout
    draft = _wait(rt, ctx.blocking_redis(), draft, since, limit)
    if draft.status != "ready":
        raise PlanFailed(f"{draft.id}: {draft.error or draft.status}; nothing was added")
    print(render_tree(draft.parsed()))
    if yes:
        tasks = planning.approve(rt, draft.id)
        print(f"{draft.id} approved: {len(tasks)} tasks added: {', '.join(t.id for t in tasks)}")
        return
    print(
        f'approve: ib plan-approve {draft.id} · change it: ib plan-edit {draft.id} "CHANGES" · '
        f"discard: ib plan-discard {draft.id}"
    )


def _last_event_id(rt: Runtime) -> str:
    last = cast(list[tuple[str, dict[str, str]]], rt.client.xrevrange(rt.keys.events, count=1))
    return last[0][0] if last else "0-0"


def _wait(rt: Runtime, reader: redis.Redis, draft: PlanDraft, since: str, limit: float) -> PlanDraft:
    """Block on the events stream until the planner ends its turn (settled here, or by the worker:
    whichever comes first) or `limit` passes (the plan fails and the planner stops)."""
    from bus.events.event_model import Event
    from worker.tasks import planning

    deadline = time.monotonic() + limit
    while (left := deadline - time.monotonic()) > 0:
        found = reader.xread({rt.keys.events: since}, block=max(1, int(min(left, 5) * 1000)), count=100)
        for _stream, entries in cast(list[tuple[str, list[tuple[str, dict[str, str]]]]], found or []):
            for entry_id, fields in entries:
                since = entry_id
                event = Event.from_entry(entry_id, fields.get(EVENT_FIELD))
                if event.agent == draft.agent and event.type in ("complete", "waiting"):
                    planning.settle(rt, planning.store(rt).get(draft.id))
                if event.data.get("plan") == draft.id and event.type in ("plan_ready", "plan_failed"):
                    return planning.store(rt).get(draft.id)
        current = planning.store(rt).get(draft.id)
        if current.status != "planning":
            return current
    planning.expire_one(rt, draft.id, limit)
    return planning.store(rt).get(draft.id)


def plans(as_json: bool = typer.Option(False, "--json", help="one JSON array")) -> None:
    """The plans: their state, goal and planner."""
    from worker.tasks import planning

    found = planning.store(Context().runtime).list()
    if as_json:
        print(json.dumps([d.as_dict() for d in found], indent=2, ensure_ascii=False))
        return
    for d in found:
        count = f" · {len(d.parsed().tasks)} tasks" if d.plan else ""
        error = f" · {d.error}" if d.error and d.status == "failed" else ""
        print(f"{d.id}  {d.status}{count}  [{d.project}] {d.goal}  (planner {d.agent}){error}")
    if not found:
        print('no plans; start one with ib plan "GOAL"')


def plan_approve(plan_id: str = typer.Argument(..., help="plan id (see ib plans)")) -> None:
    """Add a ready plan's tasks to the queue and stop its planner."""
    from worker.tasks import planning

    tasks = planning.approve(Context().runtime, plan_id)
    print(f"{plan_id} approved: {len(tasks)} tasks added: {', '.join(t.id for t in tasks)}")


def plan_edit(
    plan_id: str = typer.Argument(..., help="plan id"),
    changes: list[str] = typer.Argument(..., help="what to change, in words"),
    timeout: float = typer.Option(
        None, "--timeout", callback=values.seconds, help="seconds to wait (default IB_PLAN_TIMEOUT)"
    ),
) -> None:
    """Send changes back to the planner and print the new tree when it is done."""
    from bus.tasks.plans import render_tree
    from worker.tasks import planning

    ctx = Context()
    rt = ctx.runtime
    since = _last_event_id(rt)
    draft = planning.edit(rt, plan_id, " ".join(changes))
    limit = timeout if timeout is not None else ctx.settings.plan_timeout
    draft = _wait(rt, ctx.blocking_redis(), draft, since, limit)
    if draft.status != "ready":
        raise PlanFailed(f"{draft.id}: {draft.error or draft.status}; nothing was added")
    print(render_tree(draft.parsed()))


def plan_discard(plan_id: str = typer.Argument(..., help="plan id")) -> None:
    """Drop a plan (nothing is added) and stop its planner."""
    from worker.tasks import planning

    planning.discard(Context().runtime, plan_id)
    print(f"{plan_id} discarded")
