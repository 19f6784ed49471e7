"""The decisions of an /auto loop as one pure function: (loop state, what happened) → (new state, actions).

What happened is a bus event or the outcome of the loop's own step (a claim, a start, stop, pause or
resume asked for, an action that failed); the actions are what the worker then does, in order. No I/O.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, ClassVar

from bus.events.event_model import Event
from bus.stores.auto_state import AutoState
from bus.wire.ids import MAX_ID_LENGTH

# what happened


@dataclass(frozen=True)
class Started:
    """The loop was just created; the counts of the project's ready and blocked tasks."""

    ready: int
    blocked: int


@dataclass(frozen=True)
class Claimed:
    task: str
    agent: str
    title: str = ""
    priority: int = 0


@dataclass(frozen=True)
class NothingReady:
    """No task to claim: how many tasks of the project are claimed (by anyone), still pending, and ready
    but held because their files overlap a task in flight (IB_OVERLAP=hold)."""

    claimed: int
    pending: int
    held: int = 0


@dataclass(frozen=True)
class StopAsked:
    reason: str = ""


@dataclass(frozen=True)
class PauseAsked:
    reason: str = "paused by the person"


@dataclass(frozen=True)
class Resumed:
    """Resume a paused loop: which of its agents still exist and the status of the task in hand."""

    alive: frozenset[str] = frozenset()
    task_status: str = ""


@dataclass(frozen=True)
class ActionFailed:
    action: str
    error: str


Happening = Event | Started | Claimed | NothingReady | StopAsked | PauseAsked | Resumed | ActionFailed

# what to do


@dataclass(frozen=True)
class Claim:
    """Claim the project's next ready task for `agent` ("": an agent named after the task)."""

    kind: ClassVar[str] = "claim"
    agent: str = ""


@dataclass(frozen=True)
class GiveTask:
    """Start `agent` on `task` (in its own worktree, or without one), or send the task to it if it runs."""

    kind: ClassVar[str] = "give-task"
    agent: str
    task: str
    worktree: bool


@dataclass(frozen=True)
class QueueMerge:
    """Queue `agent`'s branch for merging into `target` ("": the branch the agent was made from)."""

    kind: ClassVar[str] = "queue-merge"
    agent: str
    task: str
    target: str = ""


@dataclass(frozen=True)
class SpawnMergeAgent:
    """A new agent that brings `source`'s branch onto `target`, resolving the conflicted `files`."""

    kind: ClassVar[str] = "spawn-merge-agent"
    agent: str
    task: str
    source: str
    target: str
    files: tuple[str, ...]


@dataclass(frozen=True)
class RetryMerge:
    """The merge agent's own branch conflicts now: ask it to bring `target` in again."""

    kind: ClassVar[str] = "retry-merge"
    agent: str
    target: str
    files: tuple[str, ...]


@dataclass(frozen=True)
class RemoveAgent:
    kind: ClassVar[str] = "remove-agent"
    agent: str


@dataclass(frozen=True)
class Publish:
    kind: ClassVar[str] = "publish"
    type: str
    msg: str
    task: str = ""
    data: dict[str, Any] = field(default_factory=dict)


Action = Claim | GiveTask | QueueMerge | SpawnMergeAgent | RetryMerge | RemoveAgent | Publish
Plan = tuple[AutoState, list[Action]]
ACTIONS: dict[str, type[Action]] = {
    cls.kind: cls for cls in (Claim, GiveTask, QueueMerge, SpawnMergeAgent, RetryMerge, RemoveAgent, Publish)
}


def action_to_dict(action: Action) -> dict[str, Any]:
    return {"kind": action.kind, **asdict(action)}


def action_from_dict(raw: dict[str, Any]) -> Action:
    values = {k: v for k, v in raw.items() if k != "kind"}
    if "files" in values:
        values["files"] = tuple(values["files"])
    return ACTIONS[str(raw["kind"])](**values)


# names


def task_agent_name(task_id: str, taken: Sequence[str] = ()) -> str:
    """The agent for a task is named after it (`impl-endpoints`, then `impl-endpoints-2`, ...)."""
    if task_id not in taken:
        return task_id
    n = 2
    while (name := f"{task_id[: MAX_ID_LENGTH - 1 - len(str(n))]}-{n}") in taken:
        n += 1
    return name


def merge_agent_name(agent: str) -> str:
    return f"merge-{agent}"[:MAX_ID_LENGTH]


def project_agent_name(project: str) -> str:
    return f"auto-{project}"[:MAX_ID_LENGTH]


def is_after(event_id: str, other: str) -> bool:
    """Stream ids compare as (milliseconds, sequence)."""
    return _id_key(event_id) > _id_key(other)


def _id_key(event_id: str) -> tuple[int, int]:
    ms, _, seq = event_id.partition("-")
    try:
        return int(ms), int(seq or 0)
    except ValueError:
        return (0, 0)


# the decision


def decide(state: AutoState, got: Happening) -> Plan:
    if isinstance(got, Event):
        return _on_event(state, got)
    if isinstance(got, StopAsked):
        return _stop(state, got.reason) if state.status in ("running", "paused") else (state, [])
    if isinstance(got, Resumed):
        return _resume(state, got) if state.status == "paused" else (state, [])
    if state.status != "running":
        return state, []
    return _step(state, got)


def _step(state: AutoState, got: Started | Claimed | NothingReady | PauseAsked | ActionFailed) -> Plan:
    if isinstance(got, Started):
        mode = " (a worktree per task)" if state.worktrees else ""
        counts = f"{_tasks(got.ready)} ready, {got.blocked} blocked"
        msg = f"Auto mode started for project {state.project}{mode}\n{counts}"
        started = Publish("auto_started", msg, data={"ready": got.ready, "blocked": got.blocked})
        return _next(state, [started])
    if isinstance(got, Claimed):
        return _claimed(state, got)
    if isinstance(got, NothingReady):
        return _nothing_ready(state, got)
    if isinstance(got, PauseAsked):
        return _pause(state, got.reason)
    return _pause(state, f"{got.action} failed: {got.error}")


def _nothing_ready(state: AutoState, got: NothingReady) -> Plan:
    if got.claimed or got.held:  # someone works on a task that may unblock more: wait for the bus to say so
        return state.replace(phase="waiting"), []
    return _finish(state, f"Nothing can run ({got.pending} blocked)." if got.pending else "Queue empty.")


def _on_event(state: AutoState, event: Event) -> Plan:
    if state.status != "running" or event.project != state.project:
        return state, []
    if event.id and state.last_event and not is_after(event.id, state.last_event):
        return state, []  # handled before a restart
    handlers = {
        "working": _while_working,
        "merging": _while_merging,
        "resolving": _while_resolving,
        "waiting": _while_waiting,
    }
    handler = handlers.get(state.phase)
    if handler is None:
        return state, []
    new, actions = handler(state, event)
    if new == state and not actions:
        return state, []
    return new.replace(last_event=event.id or state.last_event), actions


def _while_working(state: AutoState, event: Event) -> Plan:
    if event.task != state.task:
        return state, []
    if event.type == "task_done":
        return _task_done(state)
    if event.type == "task_failed":
        retry = event.data.get("will_retry") in (True, "true", 1)
        return _task_failed(state, retry)
    if event.type == "complete" and event.agent == state.task_agent:
        # its Stop hook finishes a task as the agent completes, before it tells `complete`: one still open
        # has a test command the hook leaves to `ib task done` (which the agent skipped, or whose tests
        # failed). Nothing else would move the loop on: the person is told what to run.
        return _pause(
            state,
            f"{state.task_agent} completed, but its task {state.task} is still open: "
            f"ib task done {state.task} runs its tests (or ib task fail {state.task})",
        )
    return state, []


def _task_done(state: AutoState) -> Plan:
    if state.worktrees:
        return state.replace(phase="merging", target=""), [QueueMerge(state.task_agent, state.task)]
    return _after_task(state.replace(done=_with(state.done, state.task)), [])


def _task_failed(state: AutoState, will_retry: bool) -> Plan:
    failed = state.failed if will_retry else _with(state.failed, state.task)
    actions: list[Action] = [RemoveAgent(state.task_agent)] if state.worktrees else []
    return _after_task(state.replace(failed=failed), actions)


def _while_merging(state: AutoState, event: Event) -> Plan:
    merging = state.merge_agent or state.task_agent
    if event.agent != merging or event.type not in ("merge_merged", "merge_conflict", "merge_failed"):
        return state, []
    if event.type == "merge_failed":
        return _pause(state, f"merging {merging} failed: {event.data.get('error') or event.msg}")
    if event.type == "merge_conflict":
        files = tuple(str(f) for f in event.data.get("files") or ())
        target = str(event.data.get("target") or state.target)
        resolving = state.replace(phase="resolving", files=files, target=target)
        if state.merge_agent:
            return resolving, [RetryMerge(state.merge_agent, target, files)]
        name = merge_agent_name(state.task_agent)
        spawn = SpawnMergeAgent(name, state.task, state.task_agent, target, files)
        return resolving.replace(merge_agent=name), [spawn]
    if state.merge_agent and not event.data.get("commits"):
        return _pause(state, f"{state.merge_agent} brought no commits: {state.task_agent} is not merged")
    actions: list[Action] = [RemoveAgent(state.task_agent)] if state.merge_agent else []
    return _after_task(state.replace(done=_with(state.done, state.task)), actions)


def _while_resolving(state: AutoState, event: Event) -> Plan:
    if event.type == "complete" and event.agent == state.merge_agent:
        return state.replace(phase="merging"), [QueueMerge(state.merge_agent, state.task, state.target)]
    return state, []


def _while_waiting(state: AutoState, event: Event) -> Plan:
    # A merge that ends lets go of the tasks held for overlapping it.
    if event.type in (
        "task_ready",
        "task_done",
        "task_failed",
        "merge_merged",
        "merge_conflict",
        "merge_failed",
    ):
        return _next(state, [])
    return state, []


def _claimed(state: AutoState, got: Claimed) -> Plan:
    if state.phase != "claiming":
        return state, []
    working = state.replace(
        phase="working",
        task=got.task,
        task_agent=got.agent,
        merge_agent="",
        files=(),
        target="",
        taken=_with(state.taken, got.task),
    )
    return working, [GiveTask(got.agent, got.task, state.worktrees)]


def _after_task(state: AutoState, actions: list[Action]) -> Plan:
    finished = len(state.done) + len(state.failed)
    if state.max_tasks and finished >= state.max_tasks:
        new, more = _finish(state, f"Reached --max-tasks {state.max_tasks}.")
        return new, actions + more
    return _next(state, actions)


def _next(state: AutoState, actions: list[Action]) -> Plan:
    claiming = state.replace(phase="claiming", task="", task_agent="", merge_agent="", files=(), target="")
    return claiming, [*actions, Claim("" if state.worktrees else state.agent)]


def _finish(state: AutoState, why: str) -> Plan:
    done = state.replace(status="finished", phase="idle", task="", task_agent="", merge_agent="")
    msg = f"{why} Auto mode finished. {done.summary}."
    data = {"done": list(state.done), "failed": list(state.failed), "taken": list(state.taken)}
    return done, [Publish("auto_finished", msg, data=data)]


def _pause(state: AutoState, reason: str) -> Plan:
    again = f"ib auto --project {state.project}"
    msg = f"Auto mode paused for project {state.project}: {reason}\nResume with: {again}"
    data = {"reason": reason, "phase": state.phase, "agent": state.merge_agent or state.task_agent}
    return state.replace(status="paused", reason=reason), [Publish("auto_paused", msg, state.task, data)]


def _stop(state: AutoState, reason: str) -> Plan:
    msg = f"Auto mode stopped for project {state.project}"
    if state.task and state.phase != "claiming":
        msg += f"; {state.task} stays claimed by {state.task_agent}"
    data = {"reason": reason, "agent": state.task_agent}
    stopped = state.replace(status="stopped", reason=reason or "stopped by the person")
    return stopped, [Publish("auto_stopped", msg, state.task, data)]


def _resume(state: AutoState, got: Resumed) -> Plan:
    running = state.replace(status="running", reason="")
    resumed = Publish(
        "auto_started", f"Auto mode resumed for project {state.project}", state.task, {"resumed": True}
    )
    if state.phase == "working":
        new, actions = _resume_working(running, got)
    elif state.phase == "merging":
        new, actions = _resume_merging(running, got)
    elif state.phase == "resolving" and state.merge_agent not in got.alive:
        spawn = SpawnMergeAgent(state.merge_agent, state.task, state.task_agent, state.target, state.files)
        new, actions = running, [spawn]
    elif state.phase == "resolving":
        new, actions = running, []
    else:
        new, actions = _next(running, [])
    return new, [resumed, *actions]


def _resume_working(state: AutoState, got: Resumed) -> Plan:
    """While paused the task may have finished or failed: the task's status says what is left to do."""
    if got.task_status == "done":
        return _task_done(state)
    if got.task_status == "claimed":
        if state.task_agent in got.alive:
            return state, []
        return state, [GiveTask(state.task_agent, state.task, state.worktrees)]
    will_retry = got.task_status == "ready"
    new, actions = _task_failed(state, will_retry)
    if state.task_agent not in got.alive:
        actions = [a for a in actions if not isinstance(a, RemoveAgent)]
    return new, actions


def _resume_merging(state: AutoState, got: Resumed) -> Plan:
    """Merging again after a failed merge (the person fixed the cause); an agent gone was merged by hand."""
    merging = state.merge_agent or state.task_agent
    if merging in got.alive:
        return state, [QueueMerge(merging, state.task, state.target if state.merge_agent else "")]
    leftover = [RemoveAgent(state.task_agent)] if state.merge_agent and state.task_agent in got.alive else []
    return _after_task(state.replace(done=_with(state.done, state.task)), list(leftover))


def _with(items: tuple[str, ...], item: str) -> tuple[str, ...]:
    return items if item in items else (*items, item)


def _tasks(n: int) -> str:
    return f"{n} task{'' if n == 1 else 's'}"


def unknown_project(project: str, known: Sequence[str]) -> str:
    """Why auto mode refuses a project with no tasks (a typo, most often), naming the projects there are."""
    if not known:
        return f"project {project!r} has no tasks, and no project has any: add one with `ib task add`"
    return f"project {project!r} has no tasks; projects with tasks: {', '.join(known)} (see `ib task list`)"
