"""Random dependency graphs and random interleavings of add / claim / done / fail by several agents,
checked step by step against a small reference model of the rules, on a real Redis."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import pytest
import redis
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from bus.errors import BusError, Conflict, NotFound
from bus.events.envelope import EVENT_FIELD, decode
from bus.tasks.task_store import TaskStore
from bus.wire.keys import Keys
from tests.streams import stream_entries

AGENTS = ("agent-a", "agent-b", "agent-c")
PROJECTS = ("p1", "p2")


@dataclass(frozen=True)
class Spec:
    priority: int
    project: str
    max_attempts: int
    deps: tuple[int, ...]


@dataclass
class Model:
    """The rules, written the plain way: what each task's status is and what the bus must say."""

    specs: dict[str, Spec] = field(default_factory=dict)
    seq: dict[str, int] = field(default_factory=dict)
    status: dict[str, str] = field(default_factory=dict)
    attempt: dict[str, int] = field(default_factory=dict)
    holder: dict[str, str] = field(default_factory=dict)
    readied: dict[str, int] = field(default_factory=dict)

    def live(self) -> dict[str, str]:
        """Status of every task the store holds (refused adds are only in the model)."""
        return {t: s for t, s in self.status.items() if s != "refused"}

    def deps(self, task_id: str) -> list[str]:
        return [f"t{d}" for d in self.specs[task_id].deps]

    def dependents(self, task_id: str) -> list[str]:
        return [t for t in self.specs if task_id in self.deps(t)]

    def claim_order(self, ids: list[str]) -> list[str]:
        return sorted(ids, key=lambda t: (-self.specs[t].priority, self.seq[t]))

    def ready(self, task_id: str) -> tuple[str, str]:
        self.status[task_id] = "ready"
        self.readied[task_id] = self.readied.get(task_id, 0) + 1
        return ("task_ready", task_id)

    def add(self, task_id: str, spec: Spec) -> list[tuple[str, str]] | type[BusError]:
        for dep in (f"t{d}" for d in spec.deps):
            if self.status[dep] == "refused":
                return NotFound
            if self.status[dep] == "failed":
                return Conflict
        self.specs[task_id], self.seq[task_id], self.attempt[task_id] = spec, len(self.seq), 0
        self.status[task_id] = "pending"
        said = [("task_added", task_id)]
        if all(self.status[d] == "done" for d in self.deps(task_id)):
            said.append(self.ready(task_id))
        return said

    def claim(self, project: str, agent: str) -> tuple[str | None, list[tuple[str, str]]]:
        ready = [t for t, s in self.status.items() if s == "ready" and self.specs[t].project == project]
        if not ready:
            return None, []
        task_id = self.claim_order(ready)[0]
        assert task_id not in self.holder, f"{task_id} would be claimed twice"
        self.status[task_id], self.holder[task_id] = "claimed", agent
        self.attempt[task_id] += 1
        return task_id, [("task_claimed", task_id)]

    def done(self, task_id: str, agent: str) -> list[tuple[str, str]] | type[BusError]:
        if self.status[task_id] != "claimed" or self.holder[task_id] != agent:
            return Conflict
        self.status[task_id] = "done"
        del self.holder[task_id]
        woken = [
            t
            for t in self.dependents(task_id)
            if self.status[t] == "pending" and all(self.status[d] == "done" for d in self.deps(t))
        ]
        return [("task_done", task_id)] + [self.ready(t) for t in self.claim_order(woken)]

    def fail(self, task_id: str, agent: str) -> list[tuple[str, str]] | type[BusError]:
        if self.status[task_id] != "claimed" or self.holder[task_id] != agent:
            return Conflict
        del self.holder[task_id]
        if self.attempt[task_id] < self.specs[task_id].max_attempts:
            return [("task_failed", task_id), self.ready(task_id)]
        self.status[task_id] = "failed"
        doomed: set[str] = set()
        frontier = [task_id]
        while frontier:
            for t in self.dependents(frontier.pop()):
                if t not in doomed and self.status[t] == "pending":
                    doomed.add(t)
                    frontier.append(t)
        for t in doomed:
            self.status[t] = "failed"
        return [("task_failed", task_id)] + [
            ("task_failed", t) for t in sorted(doomed, key=self.seq.__getitem__)
        ]


@st.composite
def graphs(draw: st.DrawFn) -> list[Spec]:
    count = draw(st.integers(1, 8))
    return [
        Spec(
            priority=draw(st.integers(0, 10)),
            project=draw(st.sampled_from(PROJECTS)),
            max_attempts=draw(st.integers(1, 3)),
            deps=tuple(sorted(draw(st.sets(st.integers(0, i - 1), max_size=3)))) if i else (),
        )
        for i in range(count)
    ]


CLAIM = st.tuples(st.just("claim"), st.sampled_from(AGENTS), st.sampled_from(PROJECTS))
FINISH = st.tuples(
    st.sampled_from(["done", "fail"]), st.sampled_from(AGENTS), st.one_of(st.none(), st.integers(0, 7))
)
# Adds are rarer than the rest, so some tasks arrive after their dependencies finished or failed.
OPS = st.one_of(st.tuples(st.just("add")), CLAIM, CLAIM, FINISH, FINISH, FINISH)


@pytest.fixture(scope="module")
def client(redis_url: str) -> Iterator[redis.Redis]:
    c = redis.Redis.from_url(redis_url, decode_responses=True)
    yield c
    c.close()


class Run:
    """One example: the store under test, the model, and the events not yet checked."""

    def __init__(self, client: redis.Redis) -> None:
        self.client = client
        self.keys = Keys(f"ibprop:{uuid.uuid4().hex[:10]}:")
        self.store = TaskStore(client, self.keys, events_maxlen=100_000)
        self.model = Model()
        self.seen = "0-0"

    def new_events(self, since: str | None = None) -> list[tuple[str, str]]:
        """The events since the last call (or since `since`), as (type, task)."""
        entries = stream_entries(self.client, self.keys.events, since or f"({self.seen}", "+")
        if entries:
            self.seen = entries[-1][0]
        return [(e["type"], e["task"]) for e in (decode(i, f[EVENT_FIELD]) for i, f in entries)]

    def check(self, expected: list[tuple[str, str]] | type[BusError], act: object) -> None:
        """`act` is the store's outcome (or the exception it raised); the bus and state must match."""
        if isinstance(expected, type):
            assert isinstance(act, expected), f"expected {expected.__name__}, got {act!r}"
            assert self.new_events() == []
        else:
            assert not isinstance(act, BaseException), act
            assert self.new_events() == expected
        tasks = self.store.list()
        assert {t.id: t.status for t in tasks} == self.model.live()
        assert {t.id: t.claimed_by for t in tasks if t.status == "claimed"} == self.model.holder
        for project in PROJECTS:
            ready = [
                t
                for t, s in self.model.status.items()
                if s == "ready" and self.model.specs[t].project == project
            ]
            assert self.store.ready_ids(project) == self.model.claim_order(ready)

    @staticmethod
    def attempt(call: Callable[..., object], *args: object, **kwargs: object) -> object:
        """What `call` returned, or the bus error it raised."""
        try:
            return call(*args, **kwargs)
        except BusError as e:
            return e

    def step(self, op: tuple[object, ...], specs: list[Spec]) -> None:
        kind = op[0]
        if kind == "add":
            index = len(self.model.specs)
            if index >= len(specs):
                return
            self._add(index, specs[index])
        elif kind == "claim":
            agent, project = str(op[1]), str(op[2])
            predicted, said = self.model.claim(project, agent)
            got = self.store.claim(project, agent)
            assert (got.id if got else None) == predicted
            self.check(said, got)
        else:
            self._finish(str(kind), str(op[1]), op[2])

    def _add(self, index: int, spec: Spec) -> None:
        task_id = f"t{index}"
        expected = self.model.add(task_id, spec)
        got = self.attempt(
            self.store.add,
            task_id,
            project=spec.project,
            task_id=task_id,
            priority=spec.priority,
            max_attempts=spec.max_attempts,
            after=[f"t{d}" for d in spec.deps],
        )
        if isinstance(expected, type):
            # A refused add leaves a hole; later specs that name it would be refused as unknown.
            self.model.specs[task_id] = spec
            self.model.status[task_id] = "refused"
            assert isinstance(got, expected)
            assert self.new_events() == []
            return
        self.check(expected, got)

    def _finish(self, kind: str, agent: str, pick: object) -> None:
        held = sorted((t for t, a in self.model.holder.items() if a == agent), key=self.model.seq.__getitem__)
        known = [t for t in self.model.seq if self.model.status[t] != "refused"]
        if pick is None:
            if not held:
                return
            task_id = held[0]
        else:
            if not known:
                return
            task_id = known[int(str(pick)) % len(known)]
        if kind == "done":
            expected = self.model.done(task_id, agent)
            got = self.attempt(self.store.done, task_id, agent, f"{task_id} done")
        else:
            expected = self.model.fail(task_id, agent)
            got = self.attempt(self.store.fail, task_id, agent, f"{task_id} broke")
        self.check(expected, got)

    def drive_to_completion(self) -> None:
        for task_id, agent in sorted(self.model.holder.items()):
            self.check(self.model.done(task_id, agent), self.attempt(self.store.done, task_id, agent, "end"))
        progress = True
        while progress:
            progress = False
            for project in PROJECTS:
                predicted, said = self.model.claim(project, "finisher")
                got = self.store.claim(project, "finisher")
                self.check(said, got)
                if got is not None:
                    assert got.id == predicted
                    self.check(
                        self.model.done(got.id, "finisher"), self.store.done(got.id, "finisher", "end")
                    )
                    progress = True

    def cleanup(self) -> None:
        found = list(self.client.scan_iter(match=self.keys.namespace + "*", count=1000))
        if found:
            self.client.delete(*found)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(specs=graphs(), ops=st.lists(OPS, min_size=10, max_size=60))
def test_random_graphs_and_interleavings_follow_the_rules(
    client: redis.Redis, specs: list[Spec], ops: list[tuple[object, ...]]
) -> None:
    run = Run(client)
    try:
        for op in ops:
            run.step(op, specs)
        while len(run.model.specs) < len(specs):
            run.step(("add",), specs)
        run.drive_to_completion()

        final = run.model.live()
        assert set(final.values()) <= {"done", "failed"}
        for status in ("refused", "failed"):
            if status in run.model.status.values():
                event(f"some task {status}")
        if any(n > 1 for n in run.model.readied.values()):
            event("a task retried")
        assert {t.id: t.status for t in run.store.list()} == final

        # Every entry into ready was announced exactly once on the bus, nothing else was.
        ready_events = [task for kind, task in run.new_events("-") if kind == "task_ready"]
        assert {t: ready_events.count(t) for t in set(ready_events)} == {
            t: n for t, n in run.model.readied.items() if n
        }
    finally:
        run.cleanup()
