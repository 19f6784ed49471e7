"""The state of one /auto loop as plain data, kept as the Redis hash `auto:<project>`
(`bus.stores.hash_record` converts it).

Pure (pydantic only). The worker's loop (worker/auto/loop.py) changes it; `ib auto status` and the bot read
it through `bus.stores.auto_store.AutoStore`.
"""

from __future__ import annotations

from bus.stores.hash_record import HashRecord

STATUSES = ("running", "paused", "stopped", "finished")


class AutoState(HashRecord):
    project: str
    worker: str = ""  # the worker that runs the loop
    worktrees: bool = False  # an agent (and worktree) per task, else one agent for the project
    max_tasks: int = 0  # stop after this many tasks finished (0: no limit)
    agent: str = ""  # without worktrees: the project's agent
    status: str = "running"
    phase: str = "idle"
    """idle: between tasks; claiming: taking the next task; working: an agent works on `task`; merging: its
    branch is in the merge queue; resolving: a merge agent resolves a conflict; waiting: nothing ready, but
    tasks others work on may unblock more."""
    task: str = ""  # the task in hand
    task_agent: str = ""  # the agent working on it
    merge_agent: str = ""  # the agent resolving its merge conflict
    files: tuple[str, ...] = ()  # the conflicted files
    target: str = ""  # the branch merged into
    taken: tuple[str, ...] = ()  # every task the loop took, in order, once each
    done: tuple[str, ...] = ()
    failed: tuple[str, ...] = ()  # failed for good
    reason: str = ""  # why it paused or stopped
    last_event: str = ""  # the id of the last event the loop acted on
    started_at: str = ""

    @property
    def summary(self) -> str:
        """`3/3 tasks done` (and how many failed)."""
        text = f"{len(self.done)}/{len(self.taken)} tasks done"
        return text + (f", {len(self.failed)} failed" if self.failed else "")
