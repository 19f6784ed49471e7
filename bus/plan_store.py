"""Plans on Redis: a goal, the planner agent working on it, and its validated task graph, kept as a draft
until someone approves it (only then do its tasks enter the task store) or discards it.

States: `planning → ready | failed`; `ready | failed → planning` (changes sent back to the planner);
`ready → approved`; any but approved `→ discarded`. Each change is checked and written in one
transaction, so a plan is settled or approved once even when the worker and the CLI both try.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any, TypeAlias, cast

import redis

from bus.errors import Conflict, NotFound
from bus.ids import validate_id
from bus.keys import Keys
from bus.plans import Plan

PlanList: TypeAlias = "list[PlanDraft]"


@dataclass(frozen=True)
class PlanDraft:
    id: str
    goal: str
    project: str
    status: str
    agent: str
    worker: str
    created_at: int
    deadline: int
    plan: str = ""  # the validated plan as JSON
    error: str = ""
    round: int = 1

    def parsed(self) -> Plan:
        return Plan.model_validate_json(self.plan)

    def as_dict(self) -> dict[str, Any]:
        body = asdict(self)
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
        fields = {
            "id": plan_id,
            "goal": goal,
            "project": project,
            "status": "planning",
            "agent": agent,
            "worker": worker,
            "created_at": now,
            "deadline": now + int(timeout),
            "round": 1,
        }
        pipe = self._r.pipeline(transaction=True)
        pipe.hset(self._keys.plan(plan_id), mapping=cast(Any, fields))
        pipe.zadd(self._keys.plans, {plan_id: now})
        pipe.zadd(self._keys.planning, {plan_id: now + int(timeout)})
        pipe.execute()
        return self.get(plan_id)

    def get(self, plan_id: str) -> PlanDraft:
        validate_id("plan", plan_id)
        fields = cast(dict[str, str], self._r.hgetall(self._keys.plan(plan_id)))
        if not fields:
            raise NotFound(f"no plan {plan_id}: see them with `ib plans`")
        return _from_hash(fields)

    def list(self) -> PlanList:
        ids = cast(list[str], self._r.zrange(self._keys.plans, 0, -1))
        found = []
        for plan_id in ids:
            fields = cast(dict[str, str], self._r.hgetall(self._keys.plan(plan_id)))
            if fields:
                found.append(_from_hash(fields))
        return found

    def planning(self, due_by: int | None = None) -> PlanList:
        """Plans whose planner is at work (only those past their deadline at `due_by`)."""
        top = "+inf" if due_by is None else due_by
        ids = cast(list[str], self._r.zrangebyscore(self._keys.planning, "-inf", top))
        return [d for d in (self._find(i) for i in ids) if d is not None and d.status == "planning"]

    def for_agent(self, agent: str) -> PlanDraft | None:
        """The plan an agent is the planner of, if it is still planning."""
        return next((p for p in self.planning() if p.agent == agent), None)

    def _find(self, plan_id: str) -> PlanDraft | None:
        fields = cast(dict[str, str], self._r.hgetall(self._keys.plan(plan_id)))
        return _from_hash(fields) if fields else None

    def settle(self, plan_id: str, plan: Plan | None, error: str = "") -> PlanDraft | None:
        """planning → ready (with the plan) or failed (with the error); None when it was not planning."""
        changes = (
            {"status": "ready", "plan": plan.model_dump_json(), "error": ""}
            if plan
            else {
                "status": "failed",
                "error": error,
            }
        )
        return self._change(plan_id, lambda d: d.status == "planning", changes, planning=None)

    def replan(self, plan_id: str, timeout: float) -> PlanDraft:
        """ready | failed → planning again, for the planner to rework it."""
        deadline = self.now() + int(timeout)
        changes = {"status": "planning", "deadline": str(deadline)}
        done = self._change(plan_id, lambda d: d.status in ("ready", "failed"), changes, deadline, bump=True)
        if done is None:
            raise Conflict(
                f"{plan_id} is {self.get(plan_id).status}: only a ready or failed plan can be edited"
            )
        return done

    def finish(self, plan_id: str, status: str) -> PlanDraft:
        """ready → approved, or anything but approved → discarded."""
        allowed = ("ready",) if status == "approved" else ("planning", "ready", "failed")
        done = self._change(plan_id, lambda d: d.status in allowed, {"status": status}, planning=None)
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
        """Apply `changes` if `allowed(current)`; `planning` is the new deadline, None when done planning."""
        key = self._keys.plan(plan_id)
        with self._r.pipeline(transaction=True) as pipe:
            try:
                pipe.watch(key)  # type: ignore[no-untyped-call]
                current = self.get(plan_id)
                if not allowed(current):
                    return None
                pipe.multi()
                pipe.hset(key, mapping=cast(Any, changes))
                if bump:
                    pipe.hincrby(key, "round", 1)
                if planning is None:
                    pipe.zrem(self._keys.planning, plan_id)
                else:
                    pipe.zadd(self._keys.planning, {plan_id: planning})
                pipe.execute()
            except redis.WatchError:
                return None
        return self.get(plan_id)


def _from_hash(fields: dict[str, str]) -> PlanDraft:
    return PlanDraft(
        id=fields["id"],
        goal=fields.get("goal", ""),
        project=fields.get("project", ""),
        status=fields.get("status", "planning"),
        agent=fields.get("agent", ""),
        worker=fields.get("worker", ""),
        created_at=int(fields.get("created_at", 0)),
        deadline=int(fields.get("deadline", 0)),
        plan=fields.get("plan", ""),
        error=fields.get("error", ""),
        round=int(fields.get("round", 1)),
    )
