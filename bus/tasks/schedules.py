"""Scheduled tasks on Redis: a cron expression and the task to add each time it fires.

Each schedule is a hash plus its entry in one sorted set scored by the next due time, so a worker's tick
reads only what is due. Every worker ticks; for one firing only the worker that takes the lock
`schedule-fire:<id>:<due>` (SET NX, with expiry) adds the task, whose id is made of the schedule id and
the due minute, so even a lock that expired cannot add it twice. Times come from Redis (TIME), not from
the machines' clocks.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from typing import TypeAlias, cast

import redis

from bus.errors import BusError, NotFound
from bus.stores.hash_record import HashRecord
from bus.stores.hashes import read_hash, write_hash
from bus.tasks import cron
from bus.tasks.task_defaults import DEFAULT_MAX_ATTEMPTS, DEFAULT_PRIORITY
from bus.tasks.task_model import (
    Task,
    check_max_attempts,
    check_priority,
    check_test_cmd,
    check_title,
)
from bus.tasks.task_store import TaskStore
from bus.wire.ids import validate_id
from bus.wire.keys import Keys

log = logging.getLogger(__name__)
TaskList: TypeAlias = "list[Task]"
ScheduleList: TypeAlias = "list[Schedule]"

FIRE_LOCK_SECONDS = 60  # long enough to add one task; a worker that died holding it is replaced after


class TaskTemplate(HashRecord):
    """What each firing adds: the options of `ib task add`. Kept as JSON in the schedule's hash."""

    title: str
    project: str
    body: str = ""
    priority: int = DEFAULT_PRIORITY
    after: tuple[str, ...] = ()
    max_attempts: int = DEFAULT_MAX_ATTEMPTS
    test_cmd: str | None = None

    def checked(self) -> TaskTemplate:
        check_title(self.title)
        validate_id("project", self.project)
        check_priority(self.priority)
        check_max_attempts(self.max_attempts)
        check_test_cmd(self.test_cmd)
        for dep in self.after:
            validate_id("dependency", dep)
        return self


class Schedule(HashRecord):
    """A schedule; `next_due` is its score in the `schedules` sorted set, not a field of its hash."""

    id: str
    cron: str = ""
    task: TaskTemplate
    next_due: int  # Unix seconds
    last_due: int | None = None
    last_task: str | None = None
    created_at: int = 0

    def line(self) -> str:
        """One line for lists: `sched-1  0 9 * * 1-5  → "Audit" [backend] next 2026-11-27 09:00 UTC`."""
        nxt = datetime.fromtimestamp(self.next_due, UTC).strftime("%Y-%m-%d %H:%M")
        last = f", last {self.last_task}" if self.last_task else ""
        return f'{self.id}  {self.cron}  → "{self.task.title}" [{self.task.project}] next {nxt} UTC{last}'

    def to_hash(self) -> dict[str, str]:
        stored = super().to_hash()
        del stored["next_due"]
        return stored


def due_stamp(due: int) -> str:
    return datetime.fromtimestamp(due, UTC).strftime("%Y%m%d%H%M")


def fired_task_id(schedule_id: str, due: int) -> str:
    """The id of the task one firing adds: the same on every worker, so a firing adds one task at most."""
    return f"{schedule_id}-{due_stamp(due)}"


class ScheduleStore:
    def __init__(self, client: redis.Redis, keys: Keys, tasks: TaskStore, min_interval: float = 60.0) -> None:
        self._r = client
        self._keys = keys
        self._tasks = tasks
        self._min_interval = min_interval

    def now(self) -> int:
        seconds, _micros = self._r.time()
        return int(seconds)

    def add(self, expression: str, template: TaskTemplate, schedule_id: str | None = None) -> Schedule:
        now = self.now()
        parsed = cron.parse(expression, datetime.fromtimestamp(now, UTC), self._min_interval)
        template.checked()
        if schedule_id is None:
            schedule_id = f"sched-{self._r.incr(self._keys.schedule_seq)}"
        validate_id("schedule", schedule_id)
        schedule = Schedule(
            id=schedule_id, cron=parsed.text, task=template, next_due=_next(parsed, now), created_at=now
        )
        if not self._r.hsetnx(self._keys.schedule(schedule_id), Schedule.hash_key("id"), schedule_id):
            raise BusError(f"schedule {schedule_id} already exists: pick another id or delete it first")
        pipe = self._r.pipeline(transaction=True)
        write_hash(pipe, self._keys.schedule(schedule_id), schedule.to_hash())
        pipe.zadd(self._keys.schedules, {schedule_id: schedule.next_due})
        pipe.execute()
        return self.get(schedule_id)

    def get(self, schedule_id: str) -> Schedule:
        validate_id("schedule", schedule_id)
        key = self._keys.schedule(schedule_id)
        fields = read_hash(self._r, key)
        score = self._r.zscore(self._keys.schedules, schedule_id)
        if not fields or score is None:
            raise NotFound(f"no schedule {schedule_id}: see them with `ib task schedule list`")
        return Schedule.from_hash(fields, key=key, next_due=int(score))

    def list(self) -> ScheduleList:
        found = []
        ranked = cast(list[tuple[str, float]], self._r.zrange(self._keys.schedules, 0, -1, withscores=True))
        for schedule_id, score in ranked:
            key = self._keys.schedule(schedule_id)
            fields = read_hash(self._r, key)
            if fields:
                found.append(Schedule.from_hash(fields, key=key, next_due=int(score)))
        return found

    def delete(self, schedule_id: str) -> None:
        validate_id("schedule", schedule_id)
        pipe = self._r.pipeline(transaction=True)
        pipe.zrem(self._keys.schedules, schedule_id)
        pipe.delete(self._keys.schedule(schedule_id))
        removed, _ = pipe.execute()
        if not removed:
            raise NotFound(f"no schedule {schedule_id}: see them with `ib task schedule list`")

    def fire_due(self, worker: str) -> TaskList:
        """Add the task of every schedule that is due; returns the tasks this worker added."""
        now = self.now()
        added = []
        due = self._r.zrangebyscore(self._keys.schedules, "-inf", now, withscores=True)
        for schedule_id, score in cast(list[tuple[str, float]], due):
            task = self._fire(schedule_id, int(score), now, worker)
            if task is not None:
                added.append(task)
        return added

    def _fire(self, schedule_id: str, due: int, now: int, worker: str) -> Task | None:
        if not self._r.set(self._keys.schedule_fire(schedule_id, due), worker, nx=True, ex=FIRE_LOCK_SECONDS):
            return None  # another worker has this firing
        try:
            schedule = self.get(schedule_id)
        except NotFound:
            return None  # deleted meanwhile
        task = self._add_task(schedule, due)
        self._advance(schedule, due, now, task.id if task else None)
        return task

    def _add_task(self, schedule: Schedule, due: int) -> Task | None:
        task_id = fired_task_id(schedule.id, due)
        if self._r.exists(self._keys.task(task_id)):
            return None  # added by a worker whose lock ran out before it moved the schedule on
        t = schedule.task
        try:
            task = self._tasks.add(
                t.title,
                project=t.project,
                task_id=task_id,
                body=t.body,
                priority=t.priority,
                after=t.after,
                max_attempts=t.max_attempts,
                test_cmd=t.test_cmd,
                schedule=schedule.id,
            )
        except BusError as e:
            log.warning("schedule %s: the task of %s could not be added: %s", schedule.id, due_stamp(due), e)
            return None
        log.info("schedule %s: added task %s", schedule.id, task.id)
        return task

    def _advance(self, schedule: Schedule, due: int, now: int, task_id: str | None) -> None:
        """Move the schedule to its next firing after now (missed firings are not caught up one by one)."""
        next_due = _next(cron.parse(schedule.cron, min_interval=60.0), max(due, now))
        with self._r.pipeline(transaction=True) as pipe:
            try:
                pipe.watch(self._keys.schedules)  # type: ignore[no-untyped-call]
                if pipe.zscore(self._keys.schedules, schedule.id) != due:
                    return
                pipe.multi()
                pipe.zadd(self._keys.schedules, {schedule.id: next_due}, xx=True)
                last = Schedule.hash_fields(last_due=due, **({"last_task": task_id} if task_id else {}))
                write_hash(pipe, self._keys.schedule(schedule.id), last)
                pipe.execute()
            except redis.WatchError:
                return  # another worker moved it on


def _next(parsed: cron.Cron, after: int) -> int:
    found = parsed.next_after(datetime.fromtimestamp(after, UTC))
    if found is None:
        raise BusError(f"cron expression {parsed.text!r} never fires again")
    return int(found.timestamp())
