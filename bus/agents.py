"""Agents on the bus: one hash per agent (`agent:<id>`) and the index of live agents (`agents`).

Any machine can read an agent's record; only its worker (the machine that runs its tmux session)
changes the session itself. The record is plain strings, as Redis keeps it.
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass, fields

import redis

from bus.errors import NotFound
from bus.hashes import members, read_hash, read_hashes, write_hash
from bus.keys import Keys

RESERVATION_TTL = 600  # seconds an agent id stays claimed by a spawn that never finished


@dataclass(frozen=True)
class Agent:
    id: str
    goal: str = ""
    role: str = "manager"  # manager | worker
    manager: str = ""  # the parent agent, "" for a root agent
    project: str = ""
    task: str = ""  # the task it works on, when it was given one
    root: str = ""  # the main repository
    worktree: str = ""  # "" with --no-worktree
    branch: str = ""
    base_branch: str = ""
    session: str = ""  # tmux session name
    worker: str = ""  # the worker (machine) that owns the session
    model: str = ""
    created_at: float = 0.0
    state: str = "creating"
    state_at: float = 0.0
    state_by: str = ""  # "hook" when Claude Code's own hook decided the state (authoritative)
    claude_session: str = ""
    transcript_path: str = ""
    paused: bool = False

    @classmethod
    def from_hash(cls, data: dict[str, str]) -> Agent:
        known = {f.name: f.type for f in fields(cls)}
        values: dict[str, object] = {}
        for name, raw in data.items():
            if name not in known:
                continue
            if name in ("created_at", "state_at"):
                values[name] = float(raw or 0)
            elif name == "paused":
                values[name] = raw == "1"
            else:
                values[name] = raw
        return cls(**values)  # type: ignore[arg-type]

    def to_hash(self) -> dict[str, str]:
        out: dict[str, str] = {}
        for name, value in asdict(self).items():
            out[name] = ("1" if value else "0") if isinstance(value, bool) else str(value)
        return out

    def to_json(self) -> str:
        return json.dumps(asdict(self), ensure_ascii=False)

    def event_fields(self) -> dict[str, str | None]:
        """The envelope fields of an event about this agent: agent, project, task."""
        return {"agent": self.id, "project": self.project or None, "task": self.task or None}

    @property
    def age(self) -> float:
        return max(0.0, time.time() - self.created_at)


class AgentStore:
    def __init__(self, client: redis.Redis, keys: Keys) -> None:
        self.client = client
        self.keys = keys

    def reserve(self, agent_id: str, worker: str) -> str | None:
        """Claim an agent id for `worker` before spawning it, so two machines never both make it.

        None when claimed; else the worker that has it. The claim expires unless `save` follows."""
        key = self.keys.agent(agent_id)
        pipe = self.client.pipeline()
        pipe.hsetnx(key, "worker", worker)
        pipe.hget(key, "worker")
        claimed, holder = pipe.execute()
        if claimed:
            self.client.expire(key, RESERVATION_TTL)
            return None
        return str(holder or "another worker")

    def save(self, agent: Agent) -> None:
        pipe = self.client.pipeline()
        write_hash(pipe, self.keys.agent(agent.id), agent.to_hash())
        pipe.persist(self.keys.agent(agent.id))
        pipe.sadd(self.keys.agents, agent.id)
        pipe.execute()

    def get(self, agent_id: str) -> Agent:
        data = read_hash(self.client, self.keys.agent(agent_id))
        if not data:
            raise NotFound(f"no agent {agent_id!r} (see `ib list`)")
        return Agent.from_hash(data)

    def find(self, agent_id: str) -> Agent | None:
        data = read_hash(self.client, self.keys.agent(agent_id))
        return Agent.from_hash(data) if data else None

    def all(self) -> list[Agent]:
        ids = sorted(members(self.client, self.keys.agents))
        found = read_hashes(self.client, [self.keys.agent(i) for i in ids])
        return sorted((Agent.from_hash(d) for d in found if d), key=lambda a: (a.created_at, a.id))

    def update(self, agent_id: str, **changes: str | float | bool) -> None:
        mapping = {k: ("1" if v else "0") if isinstance(v, bool) else str(v) for k, v in changes.items()}
        write_hash(self.client, self.keys.agent(agent_id), mapping)

    def state_of(self, agent_id: str) -> tuple[str, str]:
        """(state, who decided it) as stored now."""
        state, by = self.client.hmget(self.keys.agent(agent_id), ["state", "state_by"])
        return str(state or ""), str(by or "")

    def set_state(self, agent_id: str, state: str, by: str = "") -> str | None:
        """Record a new state (`by`: who decided it, "hook" or "" for the pane and the operations);
        returns the previous one when it changed, else None."""
        key = self.keys.agent(agent_id)
        previous = self.client.hget(key, "state")
        if previous == state:
            return None
        self.client.hset(key, mapping={"state": state, "state_at": str(time.time()), "state_by": by})
        return str(previous or "")

    def remove(self, agent_id: str) -> None:
        pipe = self.client.pipeline()
        pipe.delete(self.keys.agent(agent_id), self.keys.stop_turn(agent_id), self.keys.output(agent_id))
        pipe.srem(self.keys.agents, agent_id)
        pipe.execute()

    def children(self, agent_id: str) -> list[Agent]:
        return [a for a in self.all() if a.manager == agent_id]

    def descendants(self, agent_id: str) -> list[Agent]:
        """Every agent below `agent_id`, deepest first (the order to tear them down in)."""
        everyone = self.all()
        below: list[Agent] = []
        frontier = [agent_id]
        while frontier:
            current = frontier.pop()
            kids = [a for a in everyone if a.manager == current]
            below.extend(kids)
            frontier.extend(k.id for k in kids)
        return list(reversed(below))
