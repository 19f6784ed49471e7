"""The usage records on the bus: one stream per agent (`Keys.usage`), each entry one model answer with the
agent's project and task at the time, kept after the agent is killed so a project's and a task's cost
stay whole; and the reads that select them by agent, task, project and time.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, cast

import redis

from bus.costs.usage import Usage
from bus.wire.keys import Keys

_FIELDS = {"input": "i", "output": "o", "cache_write": "cw", "cache_read": "cr"}


class Scope:
    """Which answers to count: one agent's, one task's or one project's (or all), from `since` on."""

    __slots__ = ("agent", "project", "since", "task")

    def __init__(self, agent: str = "", task: str = "", project: str = "", since: float = 0.0) -> None:
        self.agent, self.task, self.project, self.since = agent, task, project, since


def entry_fields(record: Usage, project: str) -> dict[str, str]:
    fields = {short: str(getattr(record, kind)) for kind, short in _FIELDS.items()}
    fields["cw1h"] = str(record.hour_writes)
    return {"m": record.model, "at": f"{record.at:.3f}", "task": record.task, "project": project, **fields}


def entry_record(fields: dict[str, str]) -> tuple[Usage, str]:
    """A stream entry back as a record and its project; a field that is no number counts 0."""

    def number(name: str) -> int:
        value = fields.get(name, "")
        return int(value) if value.isdigit() else 0

    try:
        at = float(fields.get("at", "0"))
    except ValueError:
        at = 0.0
    counts = {kind: number(short) for kind, short in _FIELDS.items()}
    record = Usage(
        fields.get("m", "unknown"), at, task=fields.get("task", ""), hour_writes=number("cw1h"), **counts
    )
    return record, fields.get("project", "")


def append(
    client: redis.Redis | redis.client.Pipeline,
    keys: Keys,
    agent: str,
    project: str,
    records: Iterable[Usage],
) -> int:
    """Add an agent's new answers; the count added."""
    added = 0
    for record in records:
        client.xadd(keys.usage(agent), cast(Any, entry_fields(record, project)))
        added += 1
    if added:
        client.sadd(keys.usage_agents, agent)
    return added


def agents_with_usage(client: redis.Redis, keys: Keys) -> set[str]:
    return cast(set[str], client.smembers(keys.usage_agents))


def records(client: redis.Redis, keys: Keys, scope: Scope) -> dict[str, list[Usage]]:
    """The answers in `scope`, by agent (agents with none left out)."""
    agents = [scope.agent] if scope.agent else sorted(agents_with_usage(client, keys))
    pipe = client.pipeline()
    for agent in agents:
        pipe.xrange(keys.usage(agent))
    found: dict[str, list[Usage]] = {}
    for agent, entries in zip(agents, pipe.execute(), strict=True):
        chosen = [
            r for r, project in map(entry_record, (f for _id, f in entries)) if _within(r, project, scope)
        ]
        if chosen:
            found[agent] = chosen
    return found


def _within(record: Usage, project: str, scope: Scope) -> bool:
    if scope.task and record.task != scope.task:
        return False
    if scope.project and project != scope.project:
        return False
    return record.at >= scope.since


def scope_problem(client: redis.Redis, keys: Keys, scope: Scope, found: dict[str, list[Usage]]) -> str:
    """Why `scope` names nothing the bus knows ("" when it does): an agent, task or project never seen.
    A known one with no answers yet is no problem (its cost is 0)."""
    if found:
        return ""
    if scope.agent and not (
        client.exists(keys.agent(scope.agent)) or client.sismember(keys.usage_agents, scope.agent)
    ):
        return f"no agent {scope.agent!r}: see `ib list` for the agents there are"
    if scope.task and not client.exists(keys.task(scope.task)):
        return f"no task {scope.task!r}: see `ib task list` for the tasks there are"
    if scope.project and not (
        client.exists(keys.project_tasks(scope.project)) or _has_agents(client, keys, scope.project)
    ):
        return f"no project {scope.project!r}: no agent or task has it (see `ib list`, `ib task list`)"
    return ""


def _has_agents(client: redis.Redis, keys: Keys, project: str) -> bool:
    agents = sorted(cast(set[str], client.smembers(keys.agents)))
    pipe = client.pipeline()
    for agent in agents:
        pipe.hget(keys.agent(agent), "project")
    return project in pipe.execute()
