"""One merge request of a project's merge queue, as its hash on Redis keeps it."""

from __future__ import annotations

from bus.stores.hash_record import HashRecord

OPEN = ("queued", "merging")


class MergeRequest(HashRecord):
    """Merge `branch` (the agent's) into `target`. `worker` owns the agent and runs the merge."""

    id: str
    project: str = ""
    agent: str = ""
    branch: str = ""
    target: str = ""
    worker: str = ""
    task: str = ""
    title: str = ""
    status: str = "queued"  # queued | merging | merged | conflict | failed
    sha: str = ""
    commits: int = 0
    files: tuple[str, ...] = ()  # the conflicted files, after a conflict
    size: int = 0  # lines the branch changes (added + removed) since it left the target, when queued
    changed: tuple[str, ...] = ()  # the files the branch changes: the merge order compares these
    error: str = ""
    recovered: str = ""  # what the next worker did about this merge after a crash cut it short
    requested_at: float = 0.0
    finished_at: float = 0.0

    @property
    def is_open(self) -> bool:
        return self.status in OPEN
