"""The state of one /auto loop as plain data, and its Redis hash form (`auto:<project>`).

Pure (json only). The worker's loop (worker/auto/loop.py) changes it; `ib auto status` and the bot read it
through `bus.auto_store.AutoStore`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, fields

STATUSES = ("running", "paused", "stopped", "finished")
PHASES = ("idle", "claiming", "working", "merging", "resolving", "waiting")
"""idle: between tasks; claiming: taking the next task; working: an agent works on `task`; merging: its
branch is in the merge queue; resolving: a merge agent resolves a conflict; waiting: nothing ready, but
tasks others work on may unblock more."""

_LISTS = ("files", "taken", "done", "failed")
_INTS = ("max_tasks",)
_BOOLS = ("worktrees",)


@dataclass(frozen=True)
class AutoState:
    project: str
    worker: str = ""  # the worker that runs the loop
    worktrees: bool = False  # an agent (and worktree) per task, else one agent for the project
    max_tasks: int = 0  # stop after this many tasks finished (0: no limit)
    agent: str = ""  # without worktrees: the project's agent
    status: str = "running"
    phase: str = "idle"
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

    def to_hash(self) -> dict[str, str]:
        out: dict[str, str] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name in _LISTS:
                out[f.name] = json.dumps(list(value), ensure_ascii=False)
            elif f.name in _BOOLS:
                out[f.name] = "1" if value else "0"
            else:
                out[f.name] = str(value)
        return out

    @classmethod
    def from_hash(cls, data: dict[str, str]) -> AutoState:
        values: dict[str, object] = {}
        for f in fields(cls):
            if f.name not in data:
                continue
            raw = data[f.name]
            if f.name in _LISTS:
                values[f.name] = tuple(str(x) for x in json.loads(raw or "[]"))
            elif f.name in _BOOLS:
                values[f.name] = raw == "1"
            elif f.name in _INTS:
                values[f.name] = int(raw or 0)
            else:
                values[f.name] = raw
        return cls(**values)  # type: ignore[arg-type]

    def as_dict(self) -> dict[str, object]:
        return {f.name: list(v) if isinstance(v := getattr(self, f.name), tuple) else v for f in fields(self)}
