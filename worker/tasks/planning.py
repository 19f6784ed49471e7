"""Plan → tasks: a planner agent turns a goal into a task graph, kept as a draft until it is approved.

The planner writes `plan.json` at the root of its worktree (a file rather than its last message: the file
holds exactly the JSON, with no prose or fences around it and no length limit). When its turn ends
(`complete` or `waiting`) the plan is read, validated (bus/tasks/plans.py) and stored
(bus/tasks/plan_store.py), and `plan_ready` or `plan_failed` says so. Approve adds its tasks; Edit sends
changes back to the same planner; Discard and Approve stop the planner. A planner that gives no answer in time
fails the plan.
"""

from __future__ import annotations

import logging
from pathlib import Path

from bus.errors import BusError, Conflict, InvalidInput
from bus.events.event_model import Event
from bus.tasks.plan_store import PlanDraft, PlanStore
from bus.tasks.plans import parse_plan, render_tree
from bus.tasks.task_model import Task
from worker.agents import teardown
from worker.agents.spawn import SpawnRequest, new_agent
from worker.agents.talk import send
from worker.errors import WorkerError
from worker.runtime import Runtime

log = logging.getLogger(__name__)

PLAN_FILE = "plan.json"
MAX_PLAN_BYTES = 1024 * 1024
PLANNER_PROMPT = """You are a planner. Do not change any code and do not commit. Break this goal into \
tasks that other agents will do, one task each. The goal:

{goal}

Write the task graph as JSON to the file {file} in your current folder (the root of your worktree), in \
exactly this shape:
{{"tasks": [{{"id": "short-kebab-id", "title": "one line", "body": "what to do, where, how to check it", \
"priority": 5, "after": ["ids of tasks this one waits for"], "test_cmd": "a shell command that checks \
it, or null", "touches": ["files or directories it will change, relative to the root"]}}]}}
Rules: ids are lowercase letters, digits and -, unique; priority is 0 (lowest) to 10; "after" names only \
ids of this plan; no cycles; "touches" may be left empty (no globs); at most {max_tasks} tasks. When \
{file} is written, end your turn with the completion marker. If you are sent changes, rewrite {file} \
with them and end your turn again."""


def store(rt: Runtime) -> PlanStore:
    return PlanStore(rt.client, rt.keys)


def start(rt: Runtime, goal: str, project: str | None) -> PlanDraft:
    """Start a planner agent on `goal`; the plan shows up as `plan_ready` or `plan_failed`."""
    if not goal.strip():
        raise InvalidInput('plan what? e.g. ib plan "add rate limiting to the API"')
    prompt = PLANNER_PROMPT.format(goal=goal.strip(), file=PLAN_FILE, max_tasks=rt.settings.plan_max_tasks)
    agent = new_agent(rt, SpawnRequest(goal=goal.strip(), instructions=prompt, project=project))
    draft = store(rt).create(goal.strip(), agent.project, agent.id, rt.worker_id, rt.settings.plan_timeout)
    log.info("plan %s: planner %s started", draft.id, agent.id)
    return draft


def settle(rt: Runtime, draft: PlanDraft) -> PlanDraft | None:
    """Read and check what the planner wrote; store it and say so. None when it was settled already."""
    try:
        plan = parse_plan(_read_plan(rt, draft), rt.settings.plan_max_tasks)
    except InvalidInput as e:
        return _fail(rt, draft, str(e))
    done = store(rt).settle(draft.id, plan)
    if done is not None:
        tree = render_tree(plan)
        rt.publish(
            "plan_ready",
            f"{draft.id}: {len(plan.tasks)} tasks for: {draft.goal}",
            sender=draft.agent,
            project=draft.project or None,
            data={"plan": draft.id, "goal": draft.goal, "count": len(plan.tasks), "tree": tree},
        )
    return done


def _fail(rt: Runtime, draft: PlanDraft, error: str) -> PlanDraft | None:
    done = store(rt).settle(draft.id, None, error)
    if done is not None:
        log.info("plan %s failed: %s", draft.id, error)
        rt.publish(
            "plan_failed",
            f"{draft.id} failed: {error}",
            sender=draft.agent,
            project=draft.project or None,
            data={"plan": draft.id, "goal": draft.goal, "error": error},
        )
    return done


def _read_plan(rt: Runtime, draft: PlanDraft) -> str:
    agent = rt.agents.find(draft.agent)
    if agent is None or not agent.worktree:
        raise InvalidInput(f"the planner {draft.agent} is gone, so there is no plan to read")
    path = Path(agent.worktree) / PLAN_FILE
    try:
        with path.open("rb") as f:
            data = f.read(MAX_PLAN_BYTES + 1)
    except FileNotFoundError:
        raise InvalidInput(f"the planner ended its turn without writing {PLAN_FILE}") from None
    except OSError as e:
        raise InvalidInput(f"cannot read the planner's {PLAN_FILE}: {e.strerror or e}") from None
    if len(data) > MAX_PLAN_BYTES:
        raise InvalidInput(f"the planner's {PLAN_FILE} is larger than {MAX_PLAN_BYTES // 1024} KiB")
    return data.decode("utf-8", "replace")


def on_event(rt: Runtime, event: Event) -> None:
    """A planner of this worker ended its turn: its plan is read now."""
    if event.type not in ("complete", "waiting") or not event.agent:
        return
    draft = store(rt).for_agent(event.agent)
    if draft is not None and draft.worker == rt.worker_id:
        settle(rt, draft)


def expire(rt: Runtime) -> None:
    """Plans of this worker whose planner gave no answer in time fail, and the planner stops."""
    plans = store(rt)
    for draft in plans.planning(due_by=plans.now()):
        if draft.worker == rt.worker_id:
            expire_one(rt, draft.id, rt.settings.plan_timeout)


def expire_one(rt: Runtime, plan_id: str, waited: float) -> None:
    """The plan fails for want of an answer (unless it was settled meanwhile) and its planner stops."""
    draft = store(rt).get(plan_id)
    if _fail(rt, draft, f"the planner gave no answer within {waited:g} s") is not None:
        _stop_planner(rt, draft)


def approve(rt: Runtime, plan_id: str) -> list[Task]:
    """Add the plan's tasks (dependencies first) and stop the planner; refused unless the plan is ready."""
    plans = store(rt)
    draft = plans.get(plan_id)
    if draft.status != "ready":
        raise Conflict(f"{plan_id} is {draft.status}: only a ready plan can be approved")
    ordered = draft.parsed().order()
    taken = [t.id for t in ordered if rt.client.exists(rt.keys.task(t.id))]
    if taken:
        raise Conflict(f"task {taken[0]} already exists: edit the plan to use other ids")
    plans.finish(plan_id, "approved")
    added = [
        rt.tasks.add(
            t.title,
            project=draft.project or "default",
            task_id=t.id,
            body=t.body,
            priority=t.priority,
            after=t.after,
            test_cmd=t.test_cmd,
            touches=t.touches,
            cli=t.cli,
        )
        for t in ordered
    ]
    _stop_planner(rt, draft)
    rt.publish(
        "plan_approved",
        f"{plan_id} approved: {len(added)} tasks added",
        project=draft.project or None,
        data={"plan": plan_id, "tasks": [t.id for t in added]},
    )
    return added


def edit(rt: Runtime, plan_id: str, changes: str) -> PlanDraft:
    """Send changes back to the planner, which rewrites the plan; it is checked again when it ends."""
    if not changes.strip():
        raise InvalidInput('what should change? e.g. ib plan-edit plan-1 "merge the two test tasks"')
    draft = store(rt).replan(plan_id, rt.settings.plan_timeout)
    agent = rt.agents.find(draft.agent)
    if agent is not None and agent.worktree:
        (Path(agent.worktree) / PLAN_FILE).unlink(missing_ok=True)
    send(rt, draft.agent, f"Changes to the plan:\n{changes.strip()}\nRewrite {PLAN_FILE} with them.")
    return draft


def discard(rt: Runtime, plan_id: str) -> PlanDraft:
    draft = store(rt).finish(plan_id, "discarded")
    _stop_planner(rt, draft)
    rt.publish(
        "plan_discarded", f"{plan_id} discarded", project=draft.project or None, data={"plan": plan_id}
    )
    return draft


def _stop_planner(rt: Runtime, draft: PlanDraft) -> None:
    try:
        teardown.kill(rt, draft.agent, True, why="its plan was settled; ittybus ended it")
    except (BusError, WorkerError) as e:
        log.info("plan %s: planner %s not stopped: %s", draft.id, draft.agent, e)
