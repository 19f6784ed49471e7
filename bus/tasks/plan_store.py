"""Plans on Redis: a goal, the planner agent working on it, and its validated task graph, kept as a draft
until someone approves it (only then do its tasks enter the task store) or discards it.

States: `planning → ready | failed`; `ready | failed → planning` (changes sent back to the planner);
`ready → approved`; any but approved `→ discarded`. Each change is checked and written in one
transaction, so a plan is settled or approved once even when the worker and the CLI both try.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, TypeAlias, cast

import redis

from bus.errors import Conflict, NotFound
from bus.stores.hash_record import HashRecord
from bus.stores.hashes import read_hash, write_hash
from bus.tasks.plans import Plan
from bus.wire.ids import validate_id
from bus.wire.keys import Keys

PlanList: TypeAlias = "list[PlanDraft]"


class PlanDraft(HashRecord):
    id: str
    goal: str = ""
    project: str = ""
    status: str = "planning"
    agent: str = ""
    worker: str = ""
    created_at: int = 0
    deadline: int = 0
    plan: str = ""  # the validated plan as JSON
    error: str = ""
    round: int = 1

    def parsed(self) -> Plan:
        return Plan.model_validate_json(self.plan)

    def as_dict(self) -> dict[str, Any]:
        body = super().as_dict()
        body["plan"] = json.loads(self.plan) if self.plan else None
        return body


class PlanStore:
    def __init__(self, client: redis.Redis, keys: Keys) -> None:
        self._r = client
        self._keys = keys

    def now(self) -> int:
        return int(self._r.time()[0])

    def create(self, goal: str, project: str, agent: str, worker: str, timeout: float) -> PlanDraft:
        now = self.now()
        plan_id = f"plan-{self._r.incr(self._keys.plan_seq)}"
        draft = PlanDraft(
            id=plan_id,
            goal=goal,
            project=project,
            status="planning",
            agent=agent,
            worker=worker,
            created_at=now,
            deadline=now + int(timeout),
        )
        pipe = self._r.pipeline(transaction=True)
        write_hash(pipe, self._keys.plan(plan_id), draft.to_hash())
        pipe.zadd(self._keys.plans, {plan_id: now})
        pipe.zadd(self._keys.planning, {plan_id: now + int(timeout)})
        pipe.execute()
        return self.get(plan_id)

    def get(self, plan_id: str) -> PlanDraft:
        validate_id("plan", plan_id)
        found = self._find(plan_id)
        if found is None:
            raise NotFound(f"no plan {plan_id}: see them with `ib plans`")
        return found

    def list(self) -> PlanList:
        ids = cast(list[str], self._r.zrange(self._keys.plans, 0, -1))
        return [d for d in map(self._find, ids) if d is not None]

    def planning(self, due_by: int | None = None) -> PlanList:
        """Plans whose planner is at work (only those past their deadline at `due_by`)."""
        top = "+inf" if due_by is None else due_by
        ids = cast(list[str], self._r.zrangebyscore(self._keys.planning, "-inf", top))
        return [d for d in (self._find(i) for i in ids) if d is not None and d.status == "planning"]

    def for_agent(self, agent: str) -> PlanDraft | None:
        """The plan an agent is the planner of, if it is still planning."""
        return next((p for p in self.planning() if p.agent == agent), None)

    def _find(self, plan_id: str) -> PlanDraft | None:
        key = self._keys.plan(plan_id)
        fields = read_hash(self._r, key)
        return PlanDraft.from_hash(fields, key=key) if fields else None

    def settle(self, plan_id: str, plan: Plan | None, error: str = "") -> PlanDraft | None:
        """planning → ready (with the plan) or failed (with the error); None when it was not planning."""
        changes = (
            PlanDraft.hash_fields(status="ready", plan=plan.model_dump_json(), error="")
            if plan
            else PlanDraft.hash_fields(status="failed", error=error)
        )
        return self._change(plan_id, lambda d: d.status == "planning", changes, planning=None)

    def replan(self, plan_id: str, timeout: float) -> PlanDraft:
        """ready | failed → planning again, for the planner to rework it."""
        deadline = self.now() + int(timeout)
        changes = PlanDraft.hash_fields(status="planning", deadline=deadline)
        done = self._change(plan_id, lambda d: d.status in ("ready", "failed"), changes, deadline, bump=True)
        if done is None:
            raise Conflict(
                f"{plan_id} is {self.get(plan_id).status}: only a ready or failed plan can be edited"
            )
        return done

    def finish(self, plan_id: str, status: str) -> PlanDraft:
        """ready → approved, or anything but approved → discarded."""
        allowed = ("ready",) if status == "approved" else ("planning", "ready", "failed")
        changes = PlanDraft.hash_fields(status=status)
        done = self._change(plan_id, lambda d: d.status in allowed, changes, planning=None)
        if done is None:
            current = self.get(plan_id).status
            raise Conflict(f"{plan_id} is {current}, so it cannot be {status}")
        return done

    def _change(
        self,
        plan_id: str,
        allowed: Callable[[PlanDraft], bool],
        changes: dict[str, str],
        planning: int | None,
        bump: bool = False,
    ) -> PlanDraft | None:
        """Apply `changes` (hash fields) if `allowed(current)`; `planning` is the new deadline, None when done
        planning."""
        key = self._keys.plan(plan_id)
        with self._r.pipeline(transaction=True) as pipe:
            try:
                pipe.watch(key)  # type: ignore[no-untyped-call]
                current = self.get(plan_id)
                if not allowed(current):
                    return None
                pipe.multi()
                write_hash(pipe, key, changes)
                if bump:
                    pipe.hincrby(key, PlanDraft.hash_key("round"), 1)
                if planning is None:
                    pipe.zrem(self._keys.planning, plan_id)
                else:
                    pipe.zadd(self._keys.planning, {plan_id: planning})
                pipe.execute()
            except redis.WatchError:
                return None
        return self.get(plan_id)
