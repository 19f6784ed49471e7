"""A planner's answer: the task graph in a fixed JSON shape, validated, and drawn as a tree.

Pure (pydantic and json). The shape the planner is asked for:

    {"tasks": [{"id": "design-auth", "title": "Design the auth module", "body": "...", "priority": 8,
                "after": [], "test_cmd": "pytest -q tests/auth", "touches": ["auth/"]}, ...]}

Refused with the reason: text that is not JSON, a shape that does not match, duplicate or bad ids, a
dependency on an id the plan does not have, a cycle (named), no tasks, more than the cap.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from bus.errors import InvalidInput
from bus.tasks.task_model import MAX_PRIORITY, MAX_TITLE_CHARS, MIN_PRIORITY
from bus.tasks.touches import check_touches
from bus.wire.ids import validate_id

DEFAULT_MAX_TASKS = 100


class PlannedTask(BaseModel):
    model_config = ConfigDict(extra="ignore")

    id: str
    title: str = Field(min_length=1, max_length=MAX_TITLE_CHARS)
    body: str = ""
    priority: int = Field(5, ge=MIN_PRIORITY, le=MAX_PRIORITY)
    after: list[str] = Field(default_factory=list)
    test_cmd: str | None = None
    touches: list[str] = Field(default_factory=list)  # files it expects to change (bus.tasks.touches)
    cli: str = ""  # the agent program an agent for it runs; "": the worker's IB_DEFAULT_CLI

    @field_validator("id")
    @classmethod
    def _id(cls, value: str) -> str:
        try:
            return validate_id("task", value)
        except InvalidInput as e:
            raise ValueError(str(e)) from e

    @field_validator("cli")
    @classmethod
    def _cli(cls, value: str) -> str:
        try:
            return validate_id("cli", value) if value else ""
        except InvalidInput as e:
            raise ValueError(str(e)) from e

    @field_validator("touches")
    @classmethod
    def _touches(cls, value: list[str]) -> list[str]:
        try:
            return list(check_touches(value))
        except InvalidInput as e:
            raise ValueError(str(e)) from e


class Plan(BaseModel):
    model_config = ConfigDict(extra="ignore")

    tasks: list[PlannedTask]

    def order(self) -> list[PlannedTask]:
        """The tasks with every dependency before the tasks that wait for it (stable otherwise)."""
        placed: dict[str, PlannedTask] = {}
        pending = list(self.tasks)
        while pending:
            ready = [t for t in pending if all(d in placed for d in t.after)]
            for task in ready:
                placed[task.id] = task
            pending = [t for t in pending if t.id not in placed]
        return list(placed.values())


def parse_plan(text: str, max_tasks: int = DEFAULT_MAX_TASKS) -> Plan:
    """The plan in `text`, or InvalidInput with the reason."""
    if not text.strip():
        raise InvalidInput("the planner wrote nothing")
    try:
        raw: Any = json.loads(text)
    except ValueError as e:
        raise InvalidInput(f"the planner's answer is not valid JSON ({e})") from None
    if isinstance(raw, list):
        raw = {"tasks": raw}
    try:
        plan = Plan.model_validate(raw)
    except ValidationError as e:
        first = e.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise InvalidInput(f"the plan does not have the expected shape: {where}: {first['msg']}") from None
    _check_graph(plan, max_tasks)
    return plan


def _check_graph(plan: Plan, max_tasks: int) -> None:
    if not plan.tasks:
        raise InvalidInput("the plan has no tasks")
    if len(plan.tasks) > max_tasks:
        raise InvalidInput(f"the plan has {len(plan.tasks)} tasks, more than the {max_tasks} allowed")
    ids = [t.id for t in plan.tasks]
    dupes = sorted({i for i in ids if ids.count(i) > 1})
    if dupes:
        raise InvalidInput(f"the plan has two tasks with the id {dupes[0]}")
    known = set(ids)
    for task in plan.tasks:
        for dep in task.after:
            if dep not in known:
                raise InvalidInput(f"task {task.id} depends on {dep}, which is not in the plan")
    cycle = find_cycle({t.id: t.after for t in plan.tasks})
    if cycle:
        raise InvalidInput("the plan has a cycle: " + " → ".join(cycle))


def find_cycle(graph: dict[str, list[str]]) -> list[str]:
    """A cycle of the dependency graph as [a, b, ..., a], or [] when there is none."""
    state: dict[str, int] = {}  # 1 on the path, 2 done
    path: list[str] = []

    def visit(node: str) -> list[str]:
        state[node] = 1
        path.append(node)
        for nxt in graph.get(node, []):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        path.pop()
        state[node] = 2
        return []

    for node in graph:
        if node not in state and (found := visit(node)):
            return found
    return []


def render_tree(plan: Plan) -> str:
    """The plan as an indented tree: each task under the first task it waits for."""
    children: dict[str, list[PlannedTask]] = {}
    roots = []
    for task in plan.order():
        if task.after:
            children.setdefault(task.after[0], []).append(task)
        else:
            roots.append(task)
    lines: list[str] = []

    def draw(task: PlannedTask, prefix: str, last: bool, top: bool) -> None:
        branch = "" if top else ("└─ " if last else "├─ ")
        more = f" (also after {', '.join(task.after[1:])})" if len(task.after) > 1 else ""
        test = f" · test: {task.test_cmd}" if task.test_cmd else ""
        lines.append(f"{prefix}{branch}{task.id} (p{task.priority}) {task.title}{more}{test}")
        kids = children.get(task.id, [])
        inner = prefix if top else prefix + ("   " if last else "│  ")
        for i, kid in enumerate(kids):
            draw(kid, inner, i == len(kids) - 1, False)

    for root in roots:
        draw(root, "", True, True)
    return "\n".join(lines)
