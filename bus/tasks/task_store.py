"""The task graph on Redis: add, claim, finish, fail and inspect tasks, each change one Lua script.

A script changes the graph and appends its events in the same step, so a consumer that sees the stream
never misses a transition (the Linda `in()` of the seed). The scripts live in `bus/lua/task_*.lua`.

Every script waits for the replicas (`wait`, bus.events.replication): each is a transition someone acted on,
and one the failover lost comes back wrong — a lost claim hands the task to a second agent, a lost `done` has
it done and merged again, a lost `add` or `fail` is a promise silently broken. Reads never wait.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, TypeAlias

import redis
from redis.commands.core import Script

from bus.errors import BusError, BusUnavailable, Conflict, InvalidInput, NotFound
from bus.events.replication import NO_WAIT, Wait, confirmed
from bus.tasks.task_defaults import DEFAULT_MAX_ATTEMPTS, DEFAULT_MAX_BODY_BYTES, DEFAULT_PRIORITY
from bus.tasks.task_lua import SCRIPTS, done_call, fixed_args, fixed_keys, script_text, task_keys
from bus.tasks.task_model import (
    STATUSES,
    Note,
    Task,
    check_after,
    check_max_attempts,
    check_note_kind,
    check_priority,
    check_status,
    check_test_cmd,
    check_text,
    check_title,
)
from bus.tasks.touches import check_touches
from bus.wire.ids import slugify, validate_id
from bus.wire.keys import Keys

__all__ = ["Note", "Task", "TaskStore"]

TaskList: TypeAlias = "list[Task]"
IdList: TypeAlias = "list[str]"

_ERRORS: dict[str, type[BusError]] = {
    "IB_NOTFOUND": NotFound,
    "IB_CONFLICT": Conflict,
    "IB_INVALID": InvalidInput,
}
_SCRIPT_TRAILER = re.compile(r"\s*script:(?: \w+,)? on @user_script:\d+\.?\s*$")  # Valkey names no function
_REFUSAL = re.compile(r"\b(IB_[A-Z]+) (.*)", re.DOTALL)


def script_refusal(reply: str) -> tuple[type[BusError], str] | None:
    """The kind and message of a script's refusal, in Redis 7's wording (`IB_CONFLICT msg script: ...`),
    Valkey's (`IB_CONFLICT msg script: on @user_script:38.`) or Redis 6.2's
    (`Error running script (call to f_...): @user_script:1: IB_CONFLICT msg`). Pure."""
    found = _REFUSAL.search(reply)
    kind = _ERRORS.get(found.group(1)) if found else None
    if found is None or kind is None:
        return None
    return kind, _SCRIPT_TRAILER.sub("", found.group(2))


_source = script_text  # the prelude plus one script (bus.tasks.task_lua holds the one definition)


@contextmanager
def _redis_errors() -> Iterator[None]:
    """Turn what Redis says into the bus's exceptions: script refusals keep their message."""
    try:
        yield
    except redis.ResponseError as e:
        refused = script_refusal(str(e))
        if refused is None:
            raise
        kind, message = refused
        raise kind(message) from e
    except (redis.ConnectionError, redis.TimeoutError) as e:
        raise BusUnavailable(f"Redis cannot be reached: {e}") from e


class TaskStore:
    """The task graph of one namespace. `events_maxlen` trims the events stream (approximately).

    `client` must decode responses (`decode_responses=True`); every change runs as one Lua script.
    """

    def __init__(
        self,
        client: redis.Redis,
        keys: Keys,
        events_maxlen: int,
        *,
        max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
        wait: Wait = NO_WAIT,
    ) -> None:
        self._r = client
        self._wait = wait
        self._keys = keys
        self._max_body = max_body_bytes
        self._scripts: dict[str, Script] = {name: client.register_script(_source(name)) for name in SCRIPTS}
        self._maxlen = events_maxlen
        self._fixed_keys = fixed_keys(keys)
        self._fixed_args = fixed_args(keys, events_maxlen)

    # changes

    def add(
        self,
        title: str,
        *,
        project: str,
        task_id: str | None = None,
        body: str = "",
        priority: int = DEFAULT_PRIORITY,
        after: Sequence[str] = (),
        max_attempts: int = DEFAULT_MAX_ATTEMPTS,
        test_cmd: str | None = None,
        draft: bool = False,
        schedule: str | None = None,
        touches: Sequence[str] = (),
        cli: str = "",
    ) -> Task:
        """A new task: ready when it waits for nothing unfinished, pending otherwise, draft when asked.

        Without `task_id` the id is a slug of the title, made unique with a `-2`, `-3`... suffix.
        `schedule` names the schedule that added it (kept on the task and in its `task_added` event).
        `touches` are the files it expects to change (bus.tasks.touches: relative paths or directories).
        `cli` is the agent program an agent for it runs ("": the worker's IB_DEFAULT_CLI).
        """
        title = check_title(title)
        validate_id("project", project)
        if task_id is not None:
            validate_id("task", task_id)
        deps = [validate_id("dependency", dep) for dep in check_after(task_id, after)]
        paths = check_touches(touches)
        args = [
            task_id or "",
            slugify(title),
            project,
            title,
            check_text("body", body, self._max_body),
            check_priority(priority),
            check_max_attempts(max_attempts),
            check_test_cmd(test_cmd) or "",
            "1" if draft else "0",
            schedule or "",
            json.dumps(list(paths)) if paths else "",
            validate_id("cli", cli) if cli else "",
            *deps,
        ]
        keys = [self._keys.project_tasks(project), self._keys.ready(project)]
        new_id = str(self._run("add", keys, args))
        return self.get(new_id)

    def claim(self, project: str, agent: str) -> Task | None:
        """The project's next ready task (highest priority, then oldest), now claimed by `agent`; None when
        nothing is ready. Its dependencies' results, observations and handoffs are copied into its notes."""
        validate_id("project", project)
        validate_id("agent", agent)
        return _claimed(self._run("claim", [self._keys.ready(project)], [agent]))

    def claim_task(self, task_id: str, agent: str) -> Task | None:
        """Claim this one task for `agent` (the same script as `claim`, so never for two claimers);
        None when it is not ready now."""
        validate_id("agent", agent)
        task = self.get(task_id)
        return _claimed(self._run("claim", [self._keys.ready(task.project)], [agent, task_id]))

    def done(self, task_id: str, agent: str, summary: str = "") -> TaskList:
        """Finish a task `agent` holds; returns the tasks that became ready because of it, in claim order."""
        validate_id("task", task_id)
        validate_id("agent", agent)
        summary = check_text("summary", summary.strip(), self._max_body)
        _text, script_keys, args = done_call(self._keys, self._maxlen, task_id, agent, summary)
        with _redis_errors():
            woken = self._call("done", script_keys, args)
        return self._get_many([str(i) for i in woken])

    def fail(self, task_id: str, agent: str, reason: str) -> Task:
        """Record a failed attempt: the task goes back to ready while attempts remain, else it fails for
        good, and so does every task waiting on it."""
        validate_id("task", task_id)
        validate_id("agent", agent)
        reason = check_text("reason", reason.strip(), self._max_body)
        self._run("fail", self._own_keys(task_id), [task_id, agent, reason])
        return self.get(task_id)

    def release(self, task_id: str) -> Task:
        """Give a claimed task back to the ready queue; the attempt does not count."""
        validate_id("task", task_id)
        self._run("release", self._own_keys(task_id), [task_id, "released", ""])
        return self.get(task_id)

    def reclaim(self, older_than_s: float, alive: Callable[[str], bool]) -> IdList:
        """Release claims older than `older_than_s` whose agent is not `alive`; returns their ids."""
        with _redis_errors():
            seconds, micros = self._r.time()
            cutoff = seconds * 1000 + micros // 1000 - int(older_than_s * 1000)
            stale = [str(i) for i in self._r.zrangebyscore(self._keys.task_claims, "-inf", cutoff)]
            pipe = self._r.pipeline(transaction=False)
            for task_id in stale:
                pipe.hmget(self._keys.task(task_id), ["claimed_by", "claimed_at"])
            holders: list[list[str | None]] = pipe.execute()
        released = []
        for task_id, (agent, since) in zip(stale, holders, strict=True):
            if agent is None or since is None or alive(agent):
                continue
            # Released only if the claim is still the one looked at: a new claim in between stays.
            if self._run("release", self._own_keys(task_id), [task_id, "reclaimed", f"{agent} {since}"]):
                released.append(task_id)
        return released

    def held_by(self, agent: str) -> IdList:
        """The tasks `agent` holds a claim on now."""
        with _redis_errors():
            claimed = [str(i) for i in self._r.zrange(self._keys.task_claims, 0, -1)]
            pipe = self._r.pipeline(transaction=False)
            for task_id in claimed:
                pipe.hget(self._keys.task(task_id), "claimed_by")
            holders: list[str | None] = pipe.execute()
        return [task_id for task_id, holder in zip(claimed, holders, strict=True) if holder == agent]

    def add_note(self, task_id: str, kind: str, text: str) -> Note:
        """Append a context note (observation, result, handoff, test_failure) to a task."""
        validate_id("task", task_id)
        check_note_kind(kind)
        text = check_text("note", text.strip(), self._max_body, allow_empty=False)
        ts = self._run("note", self._own_keys(task_id), [task_id, kind, text])
        return Note(kind=kind, text=text, ts=int(ts), source_task=task_id)

    def observe(self, task_id: str, text: str) -> Note:
        return self.add_note(task_id, "observation", text)

    def handoff(self, task_id: str, text: str) -> Note:
        return self.add_note(task_id, "handoff", text)

    def edit(
        self,
        task_id: str,
        *,
        title: str | None = None,
        body: str | None = None,
        priority: int | None = None,
        publish: bool = False,
    ) -> Task:
        """Change title, body or priority (a ready task moves in its queue); `publish` turns a draft into
        a pending or ready task."""
        validate_id("task", task_id)
        changes: list[str | int] = []
        if title is not None:
            changes += ["title", check_title(title)]
        if body is not None:
            changes += ["body", check_text("body", body, self._max_body)]
        if priority is not None:
            changes += ["priority", check_priority(priority)]
        if publish:
            changes += ["publish", "1"]
        self._run("edit", self._own_keys(task_id), [task_id, *changes])
        return self.get(task_id)

    def add_deps(self, task_id: str, after: Sequence[str]) -> Task:
        """Make a task not yet claimed also wait for `after`; refuses a cycle and names it."""
        validate_id("task", task_id)
        deps = [validate_id("dependency", dep) for dep in check_after(task_id, after)]
        if not deps:
            return self.get(task_id)
        self._run("depend", self._own_keys(task_id), [task_id, *deps])
        return self.get(task_id)

    def delete(self, task_id: str) -> None:
        """Remove a task that no other task depends on and nobody holds."""
        validate_id("task", task_id)
        self._run("delete", self._own_keys(task_id), [task_id])

    # reading

    def get(self, task_id: str) -> Task:
        validate_id("task", task_id)
        found = self._get_many([task_id])
        if not found:
            raise NotFound(f"no task {task_id}: check the id with `ib task list`")
        return found[0]

    def list(self, project: str | None = None, status: str | None = None) -> TaskList:
        """Tasks (of one project, of one status), highest priority first, then oldest."""
        if project is not None:
            validate_id("project", project)
        if status is not None:
            check_status(status)
        index = self._keys.project_tasks(project) if project is not None else self._keys.tasks
        with _redis_errors():
            ids = [str(i) for i in self._r.zrange(index, 0, -1)]
        tasks = self._get_many(ids)
        if status is not None:
            tasks = [t for t in tasks if t.status == status]
        return sorted(tasks, key=lambda t: -t.priority)

    def dependents(self, task_id: str) -> TaskList:
        """The tasks that wait for `task_id`, oldest first (then by id)."""
        validate_id("task", task_id)
        with _redis_errors():
            ids = [str(i) for i in self._r.smembers(self._keys.task_dependents(task_id))]
        return sorted(self._get_many(ids), key=lambda t: (t.created_at, t.id))

    def touches_of(self, ids: Sequence[str]) -> dict[str, tuple[str, str, tuple[str, ...]]]:
        """Project, status and touched paths of the tasks among `ids` that exist: one light read, for
        deciding overlaps without reading bodies and notes."""
        if not ids:
            return {}
        with _redis_errors():
            pipe = self._r.pipeline(transaction=False)
            for task_id in ids:
                pipe.hmget(self._keys.task(task_id), ["project", "status", "touches"])
            replies: list[list[str | None]] = pipe.execute()
        return {
            task_id: (project, status or "", tuple(json.loads(touches)) if touches else ())
            for task_id, (project, status, touches) in zip(ids, replies, strict=True)
            if project is not None
        }

    def claimed_ids(self) -> IdList:
        """The ids of every task claimed now (all projects), oldest claim first."""
        with _redis_errors():
            return [str(i) for i in self._r.zrange(self._keys.task_claims, 0, -1)]

    def ready_ids(self, project: str) -> IdList:
        """The ids of the project's ready queue, in the order claims take them."""
        validate_id("project", project)
        with _redis_errors():
            return [str(i) for i in self._r.zrange(self._keys.ready(project), 0, -1)]

    def counts(self, project: str) -> dict[str, int]:
        """How many of the project's tasks are in each status (every status present, zeros included)."""
        validate_id("project", project)
        with _redis_errors():
            ids = self._r.zrange(self._keys.project_tasks(project), 0, -1)
            pipe = self._r.pipeline(transaction=True)
            for task_id in ids:
                pipe.hget(self._keys.task(str(task_id)), "status")
            statuses: list[str | None] = pipe.execute() if ids else []
        counts = dict.fromkeys(STATUSES, 0)
        for status in statuses:
            if status is not None:
                counts[status] = counts.get(status, 0) + 1
        return counts

    # plumbing

    def _own_keys(self, task_id: str) -> IdList:
        return task_keys(self._keys, task_id)

    def _run(self, name: str, keys: IdList, args: Sequence[str | int]) -> Any:
        with _redis_errors():
            return self._call(name, self._fixed_keys + keys, [*self._fixed_args, *args])

    def _call(self, name: str, keys: Sequence[str], args: Sequence[str | int]) -> Any:
        """Run one script; with `wait`, then `WAIT` on the same connection (loading the script first when
        this Redis does not know it yet, as after a failover to a replica that never ran it)."""
        script = self._scripts[name]
        if not self._wait[0]:
            return script(keys=keys, args=args)
        command = ("EVALSHA", script.sha, len(keys), *keys, *args)
        try:
            return confirmed(self._r, [command], self._wait, f"the task change ({name})")[0]
        except redis.exceptions.NoScriptError:
            self._r.script_load(script.script)
            return confirmed(self._r, [command], self._wait, f"the task change ({name})")[0]

    def _get_many(self, ids: Sequence[str]) -> TaskList:
        """The tasks that exist among `ids`, in that order, read in one transaction."""
        if not ids:
            return []
        with _redis_errors():
            pipe = self._r.pipeline(transaction=True)
            for task_id in ids:
                pipe.hgetall(self._keys.task(task_id))
                pipe.smembers(self._keys.task_deps(task_id))
                pipe.lrange(self._keys.task_notes(task_id), 0, -1)
            replies = pipe.execute()
        tasks = []
        for i in range(0, len(replies), 3):
            fields, deps, notes = replies[i : i + 3]
            if fields:
                tasks.append(
                    Task.from_hash(fields, key=self._keys.task(ids[i // 3]), after=deps, notes=notes)
                )
        return tasks


def _claimed(reply: Any) -> Task | None:
    """The task the claim script returns with its claim: id, flat hash, dependency ids, notes."""
    if not reply:
        return None
    _id, flat, deps, notes = reply
    fields = {str(flat[i]): str(flat[i + 1]) for i in range(0, len(flat), 2)}
    return Task.from_hash(fields, after=[str(d) for d in deps], notes=[str(n) for n in notes])
