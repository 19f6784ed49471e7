"""The /auto loops this worker runs: start, stop, pause and resume them, feed them the bus's events, and
do what worker/auto/decide.py decides — claim, spawn, send, queue merges, spawn merge agents, publish.

Each decision is saved with its actions (the outbox) before they run, and each action is taken off the
outbox when it is done, so a worker killed in the middle goes on where it was. Actions are idempotent.
"""

from __future__ import annotations

import logging
import time
from collections import deque
from pathlib import Path
from typing import cast

from bus.connection.reconnect import LOST
from bus.costs.usage_limits import DEFAULT_ACCOUNT, until_text
from bus.errors import BusError, Conflict, InvalidInput, NotFound
from bus.events.envelope import now_ts
from bus.events.event_model import Event
from bus.stores.auto_state import AutoState
from bus.stores.auto_store import AutoStore, Outbox
from bus.stores.limit_store import LimitStore
from bus.wire.ids import validate_id
from worker.agents import teardown
from worker.agents.spawn import SpawnRequest, new_agent
from worker.agents.talk import press, send
from worker.auto.decide import (
    Action,
    ActionFailed,
    Claim,
    Claimed,
    GiveTask,
    Happening,
    NothingReady,
    PauseAsked,
    Publish,
    QueueMerge,
    RemoveAgent,
    Resumed,
    RetryMerge,
    SpawnMergeAgent,
    Started,
    StopAsked,
    action_from_dict,
    action_to_dict,
    decide,
    project_agent_name,
    task_agent_name,
    unknown_project,
)
from worker.auto.prompts import MERGE_PROMPT_FILE, merge_again, merge_goal, task_goal, task_message
from worker.errors import WorkerError
from worker.merges.merge_queue import MergeQueue
from worker.runtime import Runtime

log = logging.getLogger(__name__)

WATCHED = frozenset(
    {"task_ready", "task_done", "task_failed", "merge_merged", "merge_conflict", "merge_failed", "complete"}
)
"""The event types a loop can act on; the others are not even looked up."""
GIVEN_FIELD = "given"
"""In `auto:<project>`: the last task (and attempt) handed to an agent, so a retried hand-over is skipped."""
PARKED_FIELD = "parked"  # the limit (account@reset) the loop's next claim waits out, noted once on its task


class AutoLoops:
    def __init__(self, rt: Runtime, merges: MergeQueue | None = None) -> None:
        self.rt = rt
        self.merges = merges or MergeQueue(rt)
        self.store = AutoStore(rt.client, rt.keys)
        # events an outage cut short, oldest first, each fed again once Redis answers (resume_all); later
        # events wait behind them, so a loop never sees them out of order
        self.unfed: deque[Event] = deque()

    # what people ask for (bus commands; `stop` and `pause` also from the CLI when the worker is down)

    def start(
        self, project: str, *, worktrees: bool = False, max_tasks: int = 0, agent: str | None = None
    ) -> AutoState:
        """A new loop for `project`, or the paused one resumed."""
        validate_id("project", project)
        if agent:
            validate_id("agent", agent)
            if worktrees:
                raise InvalidInput(
                    "--agent is for auto mode without --worktrees (each task gets its own agent)"
                )
        if max_tasks < 0:
            raise InvalidInput(f"bad --max-tasks {max_tasks}: use 0 (no limit) or more")
        found = self.store.load(project)
        if found is not None and found[0].status == "running":
            raise Conflict(
                f"auto mode already runs for {project} on worker {found[0].worker}; "
                f"see `ib auto status --project {project}`; stop it with `ib auto stop --project {project}`"
            )
        if found is not None and found[0].status == "paused":
            return self._resume(found[0])
        counts = self.rt.tasks.counts(project)
        if not any(counts.values()):
            raise NotFound(unknown_project(project, sorted({t.project for t in self.rt.tasks.list()})))
        state = AutoState(
            project=project,
            worker=self.rt.worker_id,
            worktrees=worktrees,
            max_tasks=max_tasks,
            agent=agent or ("" if worktrees else project_agent_name(project)),
            last_event=self._last_event_id(),  # what happened before the loop is not its business
            started_at=now_ts(),
        )
        return self._feed(state, [], Started(ready=counts["ready"], blocked=counts["pending"]))

    def stop(self, project: str, reason: str = "") -> AutoState:
        """End the loop; the task in hand stays claimed and its agent keeps running."""
        state = self._running_or_paused(project)
        return self._feed(state, [], StopAsked(reason))

    def pause(self, project: str, reason: str = "", interrupt: bool = False) -> AutoState:
        """Hold the loop (`ib auto --project P` resumes it); `interrupt` also presses Escape in its agent."""
        state = self._running_or_paused(project)
        agent = state.merge_agent or state.task_agent
        if interrupt and agent and self.rt.agents.find(agent) is not None:
            press(self.rt, agent, "Escape")
        return self._feed(state, [], PauseAsked(reason or "paused by the person"))

    def _last_event_id(self) -> str:
        last = cast(list[tuple[str, object]], self.rt.client.xrevrange(self.rt.keys.events, count=1))
        return str(last[0][0]) if last else ""

    def _running_or_paused(self, project: str) -> AutoState:
        state = self.store.get(project)
        if state is None:
            raise NotFound(f"no auto loop for project {project} (see `ib auto status`)")
        if state.status not in ("running", "paused"):
            raise Conflict(f"auto mode for {project} is already {state.status}")
        return state

    def _resume(self, state: AutoState) -> AutoState:
        if state.worker != self.rt.worker_id:
            raise Conflict(
                f"auto mode for {state.project} is paused on worker {state.worker}: resume it there"
            )
        candidates = (state.task_agent, state.merge_agent)
        alive = frozenset(a for a in candidates if a and self.rt.agents.find(a) is not None)
        status = self.rt.tasks.get(state.task).status if state.task else ""
        return self._feed(state, [], Resumed(alive, status))

    # the bus

    def on_event(self, event: Event) -> None:
        """Feed one event to the loop of its project, if this worker runs one. An outage that cuts its
        handling short (LOST, raised on) leaves it to be fed again by `resume_all`: a decision not saved
        yet is made again, and one saved already is skipped (`decide` ignores events up to `last_event`)."""
        if event.type not in WATCHED or not event.project:
            return
        self.unfed.append(event)
        self._feed_unfed()

    def _feed_unfed(self) -> None:
        while self.unfed:
            try:
                self._on_event(self.unfed[0])
            except LOST:
                raise  # it stays first, with the ones after it
            except Exception:
                self.unfed.popleft()  # a bug, not the bus: fed again it would fail again
                raise
            self.unfed.popleft()

    def _on_event(self, event: Event) -> None:
        found = self.store.load(str(event.project))
        if found is None:
            return
        state, outbox = found
        if state.worker == self.rt.worker_id and state.status == "running":
            self._feed(state, outbox, event)

    def resume_all(self) -> None:
        """On start, and once Redis answers after an outage cut a step short: feed the events it cut short,
        then finish what is left in the loops' outboxes."""
        self._feed_unfed()
        for state in self.store.all():
            if state.worker != self.rt.worker_id or state.status != "running":
                continue
            found = self.store.load(state.project)
            if found is not None and found[1]:
                log.info("auto %s: resuming %d action(s)", state.project, len(found[1]))
                self._drain(*found)

    # the machinery

    def _feed(self, state: AutoState, outbox: Outbox, got: Happening) -> AutoState:
        new, actions = decide(state, got)
        if new == state and not actions:
            return state
        pending = outbox + [action_to_dict(a) for a in actions]
        self.store.save(new, pending)
        return self._drain(new, pending)

    def _drain(self, state: AutoState, outbox: Outbox) -> AutoState:
        """Run the outbox in order; an outcome (a claim's) is decided on at once and its actions go first."""
        while outbox:
            action: Action | None = action_from_dict(outbox[0])
            if isinstance(action, Claim) and self._parked_by_limit(state):
                break  # the claim waits in the outbox; the worker drains it at the reset (resume_all)
            rest = outbox[1:]
            try:
                if isinstance(action, Claim) and not action.agent:
                    action = self._name_claimer(state, rest)
                outcome = self._run(state, action) if action is not None else self._nothing_ready(state)
            except LOST:  # the bus, not the step: it stays first in the saved outbox, run again (resume_all)
                raise
            except Exception as e:  # one bad step pauses the loop; it must not take the worker down
                if not isinstance(e, BusError | WorkerError):
                    log.exception("auto %s: %s crashed", state.project, outbox[0].get("kind"))
                outcome, rest = ActionFailed(str(outbox[0].get("kind")), str(e)), []
            if outcome is not None:
                state, more = decide(state, outcome)
                rest = [action_to_dict(a) for a in more] + rest
            outbox = rest
            self.store.save(state, outbox)
        return state

    def _parked_by_limit(self, state: AutoState) -> bool:
        """True while the account is held by its usage limit: no task goes to an agent. The task it would
        have given out gets a note saying why, once per limit."""
        now = time.time()
        limit = LimitStore(self.rt.client, self.rt.keys).is_limited(DEFAULT_ACCOUNT, now)
        if limit is None:
            return False
        mark = f"{limit.account}@{limit.reset_at:.0f}"
        if self.rt.client.hget(self.rt.keys.auto(state.project), PARKED_FIELD) != mark:
            self.rt.client.hset(self.rt.keys.auto(state.project), PARKED_FIELD, mark)
            ready = self.rt.claims.candidates(state.project)
            why = f"parked: account {limit.account} is limited until {until_text(limit.reset_at, now)}"
            if ready:  # an observation: the one note kind for what happened to a task (bus.tasks.task_model)
                self.rt.tasks.add_note(
                    ready[0], "observation", f"{why}; auto mode gives it out after the reset"
                )
            log.info("auto %s: %s", state.project, why)
        return True

    def _name_claimer(self, state: AutoState, rest: Outbox) -> Claim | None:
        """With a worktree per task the agent is named after the task it will claim (the first ready
        task not held); the name is saved before the claim, so a retried claim finds what it claimed."""
        ready = self.rt.claims.candidates(state.project)
        if not ready:
            return None
        claim = Claim(task_agent_name(ready[0], sorted(self.rt.agents.ids())))
        self.store.save(state, [action_to_dict(claim), *rest])
        return claim

    def _run(self, state: AutoState, action: Action) -> Happening | None:
        if isinstance(action, Claim):
            return self._claim(state.project, action.agent)
        if isinstance(action, GiveTask):
            self._give(state, action)
        elif isinstance(action, QueueMerge):
            self.merges.request(action.agent, action.task or None, action.target or None)
        elif isinstance(action, SpawnMergeAgent):
            self._spawn_merge_agent(state, action)
        elif isinstance(action, RetryMerge):
            send(self.rt, action.agent, merge_again(action.target, action.files))
        elif isinstance(action, RemoveAgent):
            if self.rt.agents.find(action.agent) is not None:
                teardown.kill(self.rt, action.agent, force=True, why="auto mode ended it")
        elif isinstance(action, Publish):
            self.rt.publish(
                action.type, action.msg, project=state.project, task=action.task or None, data=action.data
            )
        return None

    def _claim(self, project: str, agent: str) -> Claimed | NothingReady:
        """The task `agent` already holds in the project (a claim retried after a restart), else the next."""
        held = [t for t in self.rt.tasks.list(project, "claimed") if t.claimed_by == agent]
        task = held[0] if held else self.rt.claims.claim(project, agent)
        if task is None:
            return self._nothing_ready_in(project)
        return Claimed(task.id, agent, task.title, task.priority)

    def _nothing_ready(self, state: AutoState) -> NothingReady:
        return self._nothing_ready_in(state.project)

    def _nothing_ready_in(self, project: str) -> NothingReady:
        counts = self.rt.tasks.counts(project)
        held = len(self.rt.claims.holds(project)) if self.rt.claims.mode == "hold" else 0
        return NothingReady(claimed=counts["claimed"], pending=counts["pending"], held=held)

    def _give(self, state: AutoState, action: GiveTask) -> None:
        """Spawn the agent with the task, or send the task to the project's agent when it runs already."""
        task = self.rt.tasks.get(action.task)
        given = f"{task.id}@{task.attempt}"
        key = self.rt.keys.auto(state.project)
        if self.rt.client.hget(key, GIVEN_FIELD) == given:
            return
        agent = self.rt.agents.find(action.agent)
        if agent is None:
            req = SpawnRequest(
                goal=task_goal(task),
                name=action.agent,
                no_worktree=not action.worktree,
                project=task.project,
                task=task.id,
                cli=task.cli or None,
            )
            new_agent(self.rt, req)
        elif not action.worktree:
            send(self.rt, agent.id, task_message(task))
            self.rt.agents.update(agent.id, task=task.id)
        self.rt.client.hset(key, GIVEN_FIELD, given)

    def _spawn_merge_agent(self, state: AutoState, action: SpawnMergeAgent) -> None:
        if self.rt.agents.find(action.agent) is not None:
            return
        source = self.rt.agents.find(action.source)
        task = self.rt.tasks.get(action.task)
        goal = merge_goal(
            task=task.id,
            title=task.title,
            source=action.source,
            branch=source.branch if source else f"agent/{action.source}",
            target=action.target,
            files=action.files,
            custom=_read(self.rt.root / ".ib" / "prompts" / MERGE_PROMPT_FILE),
        )
        new_agent(self.rt, SpawnRequest(goal=goal, name=action.agent, worker=True, project=state.project))
        self.rt.agents.update(action.agent, task=task.id)  # its events carry the task; it does not claim it


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return ""
