"""Claims that respect overlaps (`IB_OVERLAP`): a ready task whose declared files overlap a task in flight
waits until that task is merged.

In flight means claimed, or done with its merge request still in the merge queue. The decision is pure
(bus.tasks.touches); this module reads the task graph and the merge queue, then claims through the claim
script one chosen task at a time, so the script still hands a task to one claimer only.
"""

from __future__ import annotations

import logging

from bus.tasks.merges import MergeStore
from bus.tasks.task_model import Task
from bus.tasks.task_store import TaskStore
from bus.tasks.touches import Hold, Running, claim_order, holds, shared

log = logging.getLogger(__name__)


class OverlapClaims:
    """Claim the project's next ready task, skipping (`hold`), noting (`warn`) or not looking at
    (`ignore`) overlaps with the tasks in flight. Has `claim(project, agent)` like `TaskStore`."""

    def __init__(self, tasks: TaskStore, merges: MergeStore, mode: str) -> None:
        self.tasks = tasks
        self.merges = merges
        self.mode = mode

    def in_flight(self, project: str) -> list[Running]:
        """Tasks claimed now (oldest claim first), then done tasks whose merge is still queued."""
        claimed = self.tasks.touches_of(self.tasks.claimed_ids())
        queued = dict.fromkeys(r.task for r in self.merges.queue(project) if r.task and r.is_open)
        merging = self.tasks.touches_of(list(queued))  # a task deleted under its merge holds nothing
        return [
            Running(task_id, touches)
            for found, status in ((claimed, "claimed"), (merging, "done"))
            for task_id, (owner, now, touches) in found.items()
            if owner == project and now == status and touches
        ]

    def holds(self, project: str) -> dict[str, Hold]:
        """The ready tasks that overlap a task in flight, with that task and the shared paths."""
        found = self.tasks.touches_of(self.tasks.ready_ids(project))
        ready = [(task_id, touches) for task_id, (_p, status, touches) in found.items() if status == "ready"]
        if not any(touches for _id, touches in ready):
            return {}
        return holds(ready, self.in_flight(project))

    def candidates(self, project: str) -> list[str]:
        """The ready ids a claim would try, in order (the held ones left out with `hold`)."""
        ready = self.tasks.ready_ids(project)
        return ready if self.mode != "hold" else claim_order(ready, self.holds(project), self.mode)

    def claim(self, project: str, agent: str) -> Task | None:
        if self.mode == "ignore":
            return self.tasks.claim(project, agent)
        held = self.holds(project)
        for task_id in claim_order(self.tasks.ready_ids(project), held, self.mode):
            task = self.tasks.claim_task(task_id, agent)
            if task is None:  # someone else took it first
                continue
            if self.mode == "hold" and self._lost_race(task):
                continue
            if task_id in held:
                hold = held[task_id]
                self.tasks.observe(
                    task.id,
                    f"ib: this task's files overlap task {hold.running}, still in flight "
                    f"({', '.join(hold.files)}): expect to merge with its changes",
                )
            return task
        return None

    def _lost_race(self, task: Task) -> bool:
        """Whether an overlapping task was claimed before ours by a claimer that chose at the same time;
        then ours goes back to the queue (the attempt does not count) and the next candidate is tried."""
        if not task.touches:
            return False
        claimed = self.tasks.claimed_ids()  # by claim time, then id
        before = claimed[: claimed.index(task.id)] if task.id in claimed else []
        for other, (project, status, touches) in self.tasks.touches_of(before).items():
            if project == task.project and status == "claimed" and shared(task.touches, touches):
                log.info("task %s overlaps %s, claimed just before: released", task.id, other)
                self.tasks.release(task.id)
                return True
        return False
