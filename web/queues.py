"""The work the page shows besides the agents: the task queue of each project as a graph (each task with the
tasks it waits for, in the order they can run; drawn by `task_graph`), the merge queue in the order it will
merge, /auto's status and the agents whose work will not merge cleanly (`at_risk`). `read_queues` reads the
bus (sync redis, run in a thread by the routes); `task_rows` and `task_graphs` are pure.
"""

from __future__ import annotations

from dataclasses import dataclass

import redis

from bus.stores.auto_store import AutoStore
from bus.tasks.merges import MergeStore
from bus.tasks.task_model import Task
from bus.tasks.task_store import TaskStore
from bus.wire.keys import Keys
from web.at_risk import AtRisk, read_at_risk
from web.task_graph import Graph, Node, layers, layout


@dataclass(frozen=True)
class TaskRow:
    id: str
    project: str
    title: str
    status: str
    priority: int
    after: tuple[str, ...]  # the tasks it waits for
    waiting_on: tuple[str, ...]  # those of them not done yet
    depth: int  # how many tasks stand before it on its longest chain of dependencies
    agent: str


@dataclass(frozen=True)
class MergeRow:
    place: int
    project: str
    agent: str
    branch: str
    target: str
    status: str
    size: int
    reason: str


@dataclass(frozen=True)
class AutoRow:
    project: str
    status: str
    phase: str
    task: str
    agent: str
    summary: str


@dataclass(frozen=True)
class ProjectGraph:
    project: str
    graph: Graph


@dataclass(frozen=True)
class Queues:
    tasks: tuple[TaskRow, ...]
    merges: tuple[MergeRow, ...]
    autos: tuple[AutoRow, ...]
    graphs: tuple[ProjectGraph, ...] = ()
    at_risk: tuple[AtRisk, ...] = ()


def task_rows(tasks: list[Task]) -> tuple[TaskRow, ...]:
    """Each task after those it waits for (by project, then depth in the graph, priority, age). Pure."""
    status = {t.id: t.status for t in tasks}
    depth = layers([_node(t) for t in tasks])
    rows = [
        TaskRow(
            id=t.id,
            project=t.project,
            title=_one_line(t.title),
            status=t.status,
            priority=t.priority,
            after=tuple(t.after),
            waiting_on=tuple(d for d in t.after if status.get(d) != "done"),
            depth=depth[t.id],
            agent=t.claimed_by or "",
        )
        for t in tasks
    ]
    return tuple(sorted(rows, key=lambda r: (r.project, r.depth, -r.priority, r.id)))


def task_graphs(tasks: list[Task]) -> tuple[ProjectGraph, ...]:
    """Each project's tasks laid out as a graph (a dependency in another project: a dashed box). Pure."""
    status = {t.id: t.status for t in tasks}
    projects: dict[str, list[Task]] = {}
    for task in tasks:
        projects.setdefault(task.project, []).append(task)
    return tuple(
        ProjectGraph(project, layout([_node(t) for t in projects[project]], status))
        for project in sorted(projects)
    )


def _node(task: Task) -> Node:
    note = f"p{task.priority}" + (f" · {task.claimed_by}" if task.claimed_by else "")
    title = _one_line(task.title)
    return Node(
        task.id, task.status, tuple(task.after), task.priority, note, f"{task.id}: {title}" if title else ""
    )


def _one_line(text: str) -> str:
    return " ".join(text.split())[:200]


def read_queues(client: redis.Redis, keys: Keys, events_maxlen: int) -> Queues:
    """Every project's tasks, merge queue and /auto loop as stored now (the stores only read here)."""
    tasks = TaskStore(client, keys, events_maxlen).list()
    merges = MergeStore(client, keys, events_maxlen)
    merge_rows = []
    for project in sorted(merges.projects()):
        for place, placed in enumerate(merges.ordered(project), 1):
            req = placed.request
            merge_rows.append(
                MergeRow(
                    place, project, req.agent, req.branch, req.target, req.status, req.size, placed.reason
                )
            )
    autos = tuple(
        AutoRow(a.project, a.status, a.phase, a.task, a.task_agent or a.agent, a.summary)
        for a in AutoStore(client, keys).all()
    )
    return Queues(task_rows(tasks), tuple(merge_rows), autos, task_graphs(tasks), read_at_risk(client, keys))
