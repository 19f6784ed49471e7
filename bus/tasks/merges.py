"""The merge queue on Redis: one list of merge requests per project in arrival order, one hash per request.
The order they are merged in is bus.tasks.merge_order's: arrival order, the smaller of two overlapping changes
first.

A request enters the queue and its `merge_ready` event is appended in one transaction; its result
(`merge_merged` / `merge_conflict` / `merge_failed`) is recorded, leaves the queue and is appended alike.

Every change here waits for the replicas (`wait`, bus.events.replication): a request the failover lost would
never be merged, and a result it lost would send the merge through git a second time.
"""

from __future__ import annotations

import time
from typing import Any, cast

import redis

from bus.errors import NotFound
from bus.events.envelope import EVENT_FIELD, encode, make_event
from bus.events.replication import NO_WAIT, Wait, commit
from bus.stores.hashes import members, read_hash, write_hash
from bus.tasks.merge_order import Placed, merge_order, position
from bus.tasks.merge_request import MergeRequest
from bus.wire.keys import Keys

RESULTS = {"merged": "merge_merged", "conflict": "merge_conflict", "failed": "merge_failed"}
HISTORY_TTL = 7 * 24 * 3600
"""How long a finished request's hash is kept (for `ib auto status` and the bot's merge topics)."""


def result_event(req: MergeRequest) -> dict[str, Any]:
    """The event that reports a finished request, with project, task and agent on the envelope. Pure."""
    where = f"{req.branch} → {req.target}"
    data: dict[str, Any] = {"merge": req.id, "branch": req.branch, "target": req.target}
    if req.status == "merged":
        msg = f"Merged {where} ({req.sha[:7]})"
        data.update(sha=req.sha, commits=req.commits)
    elif req.status == "conflict":
        listing = "".join(f"\n  - {name}" for name in req.files)
        msg = f"Merge conflict on {where}; conflicted files:{listing}"
        data.update(files=list(req.files))
    else:
        msg = f"Merge of {where} failed: {req.error}"
        data.update(error=req.error)
    if req.recovered:
        msg += f"; after a crash, {req.recovered}"
        data.update(recovered=req.recovered)
    return _event(RESULTS[req.status], msg, req, data)


def ready_message(req: MergeRequest, place: int, reason: str) -> str:
    """The words of `merge_ready`: what merges where, its place in the queue and why. Pure."""
    where = f"Merging {req.branch} → {req.target}"
    if place == 1 and not reason:
        return where
    return f"{where} (queue position {place}" + (f": {reason})" if reason else ")")


def _why(reason: str) -> dict[str, str]:
    return {"order": reason} if reason else {}


def _event(type_: str, msg: str, req: MergeRequest, data: dict[str, Any]) -> dict[str, Any]:
    return make_event(type_, msg, project=req.project, agent=req.agent, task=req.task or None, data=data)


class MergeStore:
    """The merge queues of one namespace. `client` must decode responses."""

    def __init__(self, client: redis.Redis, keys: Keys, events_maxlen: int, wait: Wait = NO_WAIT) -> None:
        self.client = client
        self.keys = keys
        self.maxlen = events_maxlen
        self.wait = wait

    def enqueue(
        self,
        *,
        project: str,
        agent: str,
        branch: str,
        target: str,
        worker: str,
        task: str = "",
        title: str = "",
        size: int = 0,
        changed: tuple[str, ...] = (),
    ) -> MergeRequest:
        """Append a request to the project's queue and publish `merge_ready`, in one transaction. The event
        says where the request stands in merge order and, when it goes before earlier ones, why."""
        merge_id = str(self.client.incr(self.keys.merge_seq))
        req = MergeRequest(
            id=merge_id,
            project=project,
            agent=agent,
            branch=branch,
            target=target,
            worker=worker,
            task=task,
            title=title,
            size=size,
            changed=changed,
            requested_at=time.time(),
        )
        place, reason = position([*self.queue(project), req], merge_id)
        data = {"merge": merge_id, "branch": branch, "target": target, "position": place, "size": size}
        event = _event("merge_ready", ready_message(req, place, reason), req, data | _why(reason))
        pipe = self.client.pipeline(transaction=True)
        write_hash(pipe, self.keys.merge(merge_id), req.to_hash())
        pipe.rpush(self.keys.merge_queue(project), merge_id)
        pipe.sadd(self.keys.merge_projects, project)
        self._append(pipe, event)
        commit(self.client, pipe, self.wait, f"merge request {merge_id}")
        return req

    def get(self, merge_id: str) -> MergeRequest:
        found = self._find(merge_id)
        if found is None:
            raise NotFound(f"no merge request {merge_id!r}")
        return found

    def _find(self, merge_id: str) -> MergeRequest | None:
        key = self.keys.merge(merge_id)
        data = read_hash(self.client, key)
        return MergeRequest.from_hash(data, key=key) if data else None

    def queue(self, project: str) -> list[MergeRequest]:
        """The project's requests still in the queue, first to be merged first."""
        ids = cast(list[str], self.client.lrange(self.keys.merge_queue(project), 0, -1))
        return [r for r in map(self._find, ids) if r is not None]

    def ordered(self, project: str) -> list[Placed]:
        """The project's requests still in the queue in the order they will be merged, each with why it goes
        before earlier ones (bus.tasks.merge_order)."""
        return merge_order(self.queue(project))

    def place(self, req: MergeRequest) -> int | None:
        """Where the request stands in its project's merge order (1 = next); None once it left the queue."""
        try:
            return position(self.queue(req.project), req.id)[0]
        except ValueError:
            return None

    def head(self, project: str) -> Placed | None:
        """The request to merge next and why it is next; a dangling id (its hash gone) is dropped from the
        queue."""
        ids = cast(list[str], self.client.lrange(self.keys.merge_queue(project), 0, -1))
        found = [(merge_id, self._find(merge_id)) for merge_id in ids]
        for merge_id, req in found:
            if req is None:
                self.client.lrem(self.keys.merge_queue(project), 1, merge_id)
        order = merge_order([req for _id, req in found if req is not None])
        return order[0] if order else None

    def open_for(self, project: str, agent: str) -> MergeRequest | None:
        """The agent's request still in the queue, if any (a second request for it would be a repeat)."""
        return next((r for r in self.queue(project) if r.agent == agent and r.is_open), None)

    def projects(self) -> list[str]:
        return sorted(members(self.client, self.keys.merge_projects))

    def mark(self, req: MergeRequest, **changes: Any) -> MergeRequest:
        """Record progress (`merging`, or the result before the agent goes) without leaving the queue."""
        updated = req.replace(**changes)
        pipe = self.client.pipeline(transaction=True)
        write_hash(pipe, self.keys.merge(req.id), updated.to_hash())
        commit(self.client, pipe, self.wait, f"merge request {req.id}")
        return updated

    def finish(self, req: MergeRequest) -> None:
        """Record the result, take the request out of the queue and publish its event, in one transaction."""
        pipe = self.client.pipeline(transaction=True)
        write_hash(pipe, self.keys.merge(req.id), req.replace(finished_at=time.time()).to_hash())
        pipe.expire(self.keys.merge(req.id), HISTORY_TTL)
        pipe.lrem(self.keys.merge_queue(req.project), 1, req.id)
        self._append(pipe, result_event(req))
        commit(self.client, pipe, self.wait, f"the result of merge request {req.id}")

    def _append(self, pipe: redis.client.Pipeline, event: dict[str, Any]) -> None:
        pipe.xadd(self.keys.events, {EVENT_FIELD: encode(event)}, maxlen=self.maxlen, approximate=True)
