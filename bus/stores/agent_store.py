"""Agents on the bus: one hash per agent (`agent:<id>`), the index of live agents (`agents`) and each
worker's own (`worker-agents:<worker>`, bus.stores.agent_index), written with the record in one step.

Any machine can read an agent's record; only its worker (the machine that runs its tmux session)
changes the session itself. A worker reads its own agents (`of_worker`), never the whole bus each tick;
`all` is for what shows the whole fleet, once per request. `bus.stores.hash_record` converts the record to
and from the hash.
"""

from __future__ import annotations

import time
from collections.abc import Collection
from typing import Any

import redis
from redis.client import Pipeline

from bus.errors import NotFound
from bus.stores import agent_index
from bus.stores.hash_record import HashRecord
from bus.stores.hashes import members, read_hash, read_hashes, write_hash
from bus.wire.agent_update import ID_FIELD, update_if_whole
from bus.wire.keys import Keys

RESERVATION_TTL = 600  # seconds an agent id stays claimed by a spawn that never finished
USAGE_USD = "usage_usd"  # a field beside the record: dollars the transcript tail summed (worker.agents)


class Agent(HashRecord):
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
    program: str = ""  # the agent program (`--cli`): claude, codex, gemini; "" for agents made before: claude
    permission_mode: str = ""  # Claude Code's, as written into its settings ("" for agents made before)
    created_at: float = 0.0
    state: str = "creating"
    state_at: float = 0.0
    state_by: str = ""  # "hook" when Claude Code's own hook decided the state (authoritative)
    detail: str = ""  # what the pane adds: "retrying (rate_limit) · attempt 4/10"; how a stopped one ended
    ending: str = ""  # set by ittybus's own teardown before it ends the session: "ib kill ended it"
    claude_session: str = ""
    transcript_path: str = ""
    paused: bool = False
    account: str = ""  # the API key / Claude login it runs under ("": the one default account)
    limited_until: float = 0.0  # the reset of the usage limit it is parked on (worker.hooks.limit_park)
    limit_line: str = ""  # the pane's limit line the watcher parked it on, so one line parks it once

    def event_fields(self) -> dict[str, str | None]:
        """The envelope fields of an event about this agent: agent, project, task."""
        return {"agent": self.id, "project": self.project or None, "task": self.task or None}

    @property
    def cli(self) -> str:
        """The agent program's `--cli` name; agents made before there was a choice ran Claude Code."""
        return self.program or "claude"

    @property
    def age(self) -> float:
        return max(0.0, time.time() - self.created_at)


class AgentStore:
    def __init__(self, client: redis.Redis, keys: Keys) -> None:
        self.client = client
        self.keys = keys
        # key → (hash, record) as of_worker read them last: a worker reads its agents every tick, most of
        # them unchanged, and parsing them again was a third of that read's CPU
        self._last_mine: dict[str, tuple[dict[str, str], Agent]] = {}

    def reserve(self, agent_id: str, worker: str) -> str | None:
        """Claim an agent id for `worker` before spawning it, so two machines never both make it.

        None when claimed; else the worker that has it. The claim expires unless `save` follows."""
        key = self.keys.agent(agent_id)
        pipe = self.client.pipeline()
        pipe.hsetnx(key, Agent.hash_key("worker"), worker)
        pipe.hget(key, Agent.hash_key("worker"))
        claimed, holder = pipe.execute()
        if claimed:
            self.client.expire(key, RESERVATION_TTL)
            return None
        return str(holder or "another worker")

    def save(self, agent: Agent) -> None:
        """Write the whole record, list it in `agents` and in its worker's index (out of another's)."""
        agent_index.write(self.client, self.keys, agent.id, agent.to_hash(), agent.worker, save=True)

    def get(self, agent_id: str) -> Agent:
        found = self.find(agent_id)
        if found is None:
            raise NotFound(f"no agent {agent_id!r} (see `ib list`)")
        return found

    def find(self, agent_id: str) -> Agent | None:
        key = self.keys.agent(agent_id)
        data = read_hash(self.client, key)
        return Agent.from_hash(data, key=key) if _whole(data) else None

    def all(self) -> list[Agent]:
        """Every agent of the bus, oldest first: for what shows the whole fleet, once per request."""
        return self._read(members(self.client, self.keys.agents))

    def all_with(self, field: str) -> list[tuple[Agent, str]]:
        """Every agent of the bus, oldest first, with a field its hash keeps beside the record (`USAGE_USD`):
        one read of each hash for both."""
        ids = sorted(members(self.client, self.keys.agents))
        keys = [self.keys.agent(i) for i in ids]
        found = [
            (Agent.from_hash(d, key=k), d.get(field, ""))
            for k, d in zip(keys, read_hashes(self.client, keys), strict=True)
            if _whole(d)
        ]
        return sorted(found, key=lambda pair: (pair[0].created_at, pair[0].id))

    def ids(self) -> set[str]:
        """The ids of every agent of the bus, without their records."""
        return members(self.client, self.keys.agents)

    def of_worker(self, worker: str) -> list[Agent]:
        """The agents `worker` owns, oldest first: its index and their records, not the whole bus. An id
        left in the index whose record names another worker is not among them (`agent_index.repair`). A
        record whose hash is as the last call read it is not parsed again."""
        pipe = self.client.pipeline(transaction=False)
        pipe.exists(self.keys.agent_index)
        pipe.smembers(self.keys.worker_agents(worker))
        built, ids = pipe.execute()
        if not built:
            agent_index.build(self.client, self.keys)
            ids = members(self.client, self.keys.worker_agents(worker))
        keys = [self.keys.agent(i) for i in ids]
        last, self._last_mine = self._last_mine, {}
        for key, data in zip(keys, read_hashes(self.client, keys), strict=True):
            if not _whole(data):
                continue
            before = last.get(key)
            if before is None or before[0] != data:
                before = (data, Agent.from_hash(data, key=key))
            self._last_mine[key] = before
        mine = [agent for _data, agent in self._last_mine.values() if agent.worker == worker]
        return sorted(mine, key=lambda a: (a.created_at, a.id))

    def _read(self, ids: set[str]) -> list[Agent]:
        keys = [self.keys.agent(i) for i in sorted(ids)]
        found = zip(keys, read_hashes(self.client, keys), strict=True)
        return sorted(
            (Agent.from_hash(d, key=k) for k, d in found if _whole(d)), key=lambda a: (a.created_at, a.id)
        )

    def update(self, agent_id: str, **changes: Any) -> None:
        """Change some fields; each name must be a field of `Agent` and each value must fit it. A new
        `worker` moves the agent to that worker's index in the same step."""
        fields = Agent.hash_fields(**changes)
        if "worker" in changes:
            agent_index.write(self.client, self.keys, agent_id, fields, str(changes["worker"]), save=False)
        else:
            self._write_if_whole(agent_id, fields)

    def state_of(self, agent_id: str) -> tuple[str, str, float]:
        """(state, who decided it, when it was set: epoch seconds, 0 if never) as stored now."""
        fields = [Agent.hash_key("state"), Agent.hash_key("state_by"), Agent.hash_key("state_at")]
        state, by, at = self.client.hmget(self.keys.agent(agent_id), fields)
        try:
            since = float(at or 0)
        except ValueError:
            since = 0.0
        return str(state or ""), str(by or ""), since

    def worker_of(self, agent_id: str) -> str | None:
        """The worker that owns the agent ("" when its record names none), None when it has no record."""
        found = self.client.hget(self.keys.agent(agent_id), Agent.hash_key("worker"))
        return None if found is None else str(found)

    def workers_of(self, agent_ids: Collection[str]) -> dict[str, str | None]:
        """`worker_of` of each agent, in one round trip (no MULTI: a read)."""
        pipe = self.client.pipeline(transaction=False)
        for agent_id in agent_ids:
            pipe.hget(self.keys.agent(agent_id), Agent.hash_key("worker"))
        found = pipe.execute()
        return {a: None if w is None else str(w) for a, w in zip(agent_ids, found, strict=True)}

    def ending_of(self, agent_id: str) -> str:
        """Why ittybus itself is ending the agent's session ("" when it is not)."""
        return str(self.client.hget(self.keys.agent(agent_id), Agent.hash_key("ending")) or "")

    def set_state(self, agent_id: str, state: str, by: str = "") -> str | None:
        """Record a new state (`by`: who decided it, "hook" or "" for the pane and the operations);
        returns the previous one when it changed, else None."""
        key = self.keys.agent(agent_id)
        previous = self.client.hget(key, Agent.hash_key("state"))
        if previous == state:
            return None
        fields = Agent.hash_fields(state=state, state_at=time.time(), state_by=by)
        if not self._write_if_whole(agent_id, fields):
            return None  # removed meanwhile: no agent, no change
        return str(previous or "")

    def _write_if_whole(self, agent_id: str, fields: dict[str, str]) -> bool:
        """Write the fields unless the agent is gone (removed, or a reservation only); whether it was."""
        return bool(self.client.execute_command(*update_if_whole(self.keys.agent(agent_id), fields)))

    def set_state_if(self, agent_id: str, before: str, state: str) -> bool:
        """Record `state` only while the agent is still in `before` (a hook may have moved it since it was
        read); whether it was. A write to the record between the read and the write (any field) reads it
        again (redis-py's `transaction`): given up on, the agent stayed `limited` after its resume."""
        key = self.keys.agent(agent_id)

        def move(pipe: Pipeline) -> bool:
            if pipe.hget(key, Agent.hash_key("state")) != before:
                return False
            pipe.multi()
            write_hash(pipe, key, Agent.hash_fields(state=state, state_at=time.time(), state_by=""))
            return True

        # redis-py types `func` as returning None, value_from_callable or not
        return bool(self.client.transaction(move, key, value_from_callable=True))  # type: ignore[arg-type]

    def remove(self, agent_id: str) -> None:
        """Forget an agent; its pause, budget and what counted against that go with it (a new agent of the
        same name starts clean), its usage stays (`ib cost` of its project and tasks stays whole)."""
        k = self.keys
        pipe = self.client.pipeline()
        agent_index.forget(pipe, k, agent_id)
        pipe.delete(k.stop_turn(agent_id), k.output(agent_id), k.hold(agent_id))
        pipe.delete(k.agent_inbox(agent_id))
        pipe.delete(k.budget("agent", agent_id), k.spent("agent", agent_id))
        pipe.srem(k.budgets, f"agent:{agent_id}")
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


def _whole(data: dict[str, str]) -> bool:
    """A saved record: not a missing one, nor a reservation, nor what a write after a removal left."""
    return ID_FIELD in data
