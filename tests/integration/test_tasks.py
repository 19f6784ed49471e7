"""The task graph on a real Redis: every operation, every refusal, notes, retries and the seed's events."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import Any, cast

import pytest
import redis

from bus.errors import BusError, Conflict, InvalidInput, NotFound
from bus.events.envelope import EVENT_FIELD, Envelope, decode
from bus.events.event_model import Event
from bus.tasks.task_model import STATUSES
from bus.tasks.task_store import TaskStore, _source
from bus.wire.keys import Keys

P = "backend"


Entries = list[tuple[str, dict[str, str]]]


def entries(rds: redis.Redis, keys: Keys, since: str = "-") -> Entries:
    return cast(Entries, rds.xrange(keys.events, since, "+"))


def last_id(rds: redis.Redis, keys: Keys) -> str:
    return cast(Entries, rds.xrevrange(keys.events, count=1))[0][0]


def events(rds: redis.Redis, keys: Keys, since: str = "-") -> list[Envelope]:
    return [decode(entry_id, fields[EVENT_FIELD]) for entry_id, fields in entries(rds, keys, since)]


def kinds(rds: redis.Redis, keys: Keys) -> list[tuple[str, str]]:
    return [(e["type"], e["task"]) for e in events(rds, keys)]


# add


def test_add_without_deps_is_ready_and_queued(store: TaskStore, rds: redis.Redis, keys: Keys) -> None:
    task = store.add("Design auth", project=P, body="JWT?", priority=8, test_cmd="pytest -q", max_attempts=2)
    assert task.id == "design-auth"
    assert (task.status, task.priority, task.body, task.test_cmd, task.max_attempts) == (
        "ready",
        8,
        "JWT?",
        "pytest -q",
        2,
    )
    assert task.attempt == 0 and task.created_at > 0 and task.claimed_by is None
    assert store.ready_ids(P) == ["design-auth"]
    assert rds.zrange(keys.project_tasks(P), 0, -1) == ["design-auth"]
    assert rds.zrange(keys.tasks, 0, -1) == ["design-auth"]


def test_add_waits_for_unfinished_deps_only(store: TaskStore, rds: redis.Redis, keys: Keys) -> None:
    store.add("a", project=P)
    b = store.add("b", project=P, after=["a", "a"])
    assert b.status == "pending" and b.after == ("a",)
    assert rds.smembers(keys.task_deps("b")) == {"a"}
    assert rds.smembers(keys.task_dependents("a")) == {"b"}
    store.claim(P, "agent-1")
    store.done("a", "agent-1", "ok")
    c = store.add("c", project=P, after=["a"])
    assert c.status == "ready"


def test_slugs_are_made_unique(store: TaskStore) -> None:
    ids = [store.add("Design auth!", project=P).id for _ in range(3)]
    assert ids == ["design-auth", "design-auth-2", "design-auth-3"]
    long = [store.add("y" * 200, project=P).id for _ in range(2)]
    assert long == ["y" * 48, "y" * 48 + "-2"]


def test_draft_never_becomes_ready_until_published(store: TaskStore, rds: redis.Redis, keys: Keys) -> None:
    draft = store.add("later", project=P, draft=True)
    assert draft.status == "draft" and store.ready_ids(P) == []
    assert store.claim(P, "agent-1") is None
    assert store.edit("later", publish=True).status == "ready"
    assert kinds(rds, keys) == [("task_added", "later"), ("task_ready", "later")]
    assert events(rds, keys)[1]["data"]["reason"] == "published"


def test_publishing_a_draft_with_unfinished_deps_leaves_it_pending(store: TaskStore) -> None:
    store.add("a", project=P)
    store.add("b", project=P, after=["a"], draft=True)
    assert store.edit("b", publish=True).status == "pending"
    with pytest.raises(Conflict, match="not a draft"):
        store.edit("b", publish=True)


BAD_ADDS: list[tuple[str, dict[str, Any], type[BusError], str]] = [
    ("unknown-dep", {"after": ["nope"]}, NotFound, "unknown dependency nope"),
    ("self-dep", {"task_id": "x", "after": ["base", "x"]}, InvalidInput, "'x' cannot depend on itself"),
    ("priority-11", {"priority": 11}, InvalidInput, "bad priority 11"),
    ("priority--1", {"priority": -1}, InvalidInput, "bad priority -1"),
    ("priority-word", {"priority": "high"}, InvalidInput, "bad priority 'high'"),
    (
        "body-1mb",
        {"body": "x" * 1_048_576},
        InvalidInput,
        "1048576 bytes; the limit is 262144 bytes (256 KiB)",
    ),
    ("duplicate-id", {"task_id": "base"}, Conflict, "task base already exists"),
    ("bad-id", {"task_id": "Base Task"}, InvalidInput, "bad task id 'Base Task'"),
    ("bad-dep-id", {"after": ["../etc"]}, InvalidInput, "bad dependency id '../etc'"),
    ("bad-project", {"project": "Back End"}, InvalidInput, "bad project id 'Back End'"),
    ("max-attempts-0", {"max_attempts": 0}, InvalidInput, "bad max_attempts 0"),
    ("empty-title", {"title": "  "}, InvalidInput, "needs a title"),
]


@pytest.mark.parametrize("case", [c[1:] for c in BAD_ADDS], ids=[c[0] for c in BAD_ADDS])
def test_add_refuses(
    store: TaskStore, rds: redis.Redis, keys: Keys, case: tuple[dict[str, Any], type[BusError], str]
) -> None:
    options, error, message = case
    store.add("base", project=P)
    before = rds.xlen(keys.events)
    arguments: dict[str, Any] = {"title": "new task", "project": P, **options}
    with pytest.raises(error) as caught:
        store.add(**arguments)
    assert message in str(caught.value)
    assert "script:" not in str(caught.value)
    assert [t.id for t in store.list()] == ["base"]
    assert rds.xlen(keys.events) == before


def test_add_refuses_a_failed_dependency(store: TaskStore) -> None:
    store.add("a", project=P, max_attempts=1)
    store.claim(P, "agent-1")
    store.fail("a", "agent-1", "broken")
    with pytest.raises(Conflict, match="dependency a has failed"):
        store.add("b", project=P, after=["a"])


# dependencies added later, cycles


@pytest.mark.parametrize(
    ("chain", "task", "new_dep", "cycle"),
    [
        (["a", "b"], "a", "b", "a -> b -> a"),
        (["a", "b", "c"], "a", "c", "a -> c -> b -> a"),
        (["a", "b", "c", "d"], "b", "d", "b -> d -> c -> b"),
    ],
    ids=["two", "three", "inner"],
)
def test_a_dependency_that_closes_a_cycle_is_refused_and_named(
    store: TaskStore, chain: list[str], task: str, new_dep: str, cycle: str
) -> None:
    for i, task_id in enumerate(chain):
        store.add(task_id, project=P, task_id=task_id, after=chain[i - 1 : i] if i else [])
    with pytest.raises(InvalidInput) as caught:
        store.add_deps(task, [new_dep])
    assert f"makes a cycle {cycle}" in str(caught.value)
    assert store.get(task).after == tuple(chain[chain.index(task) - 1 : chain.index(task)])


def test_add_deps_refuses_itself_and_unknown_and_claimed(store: TaskStore) -> None:
    store.add("a", project=P)
    store.add("b", project=P)
    with pytest.raises(InvalidInput, match="'a' cannot depend on itself"):
        store.add_deps("a", ["a"])
    with pytest.raises(NotFound, match="unknown dependency zz"):
        store.add_deps("a", ["zz"])
    store.claim(P, "agent-1")
    with pytest.raises(Conflict, match="task a is claimed"):
        store.add_deps("a", ["b"])


def test_add_deps_sends_a_ready_task_back_to_pending(store: TaskStore) -> None:
    store.add("a", project=P, priority=1)
    store.add("b", project=P)
    assert store.add_deps("b", ["a"]).status == "pending"
    assert store.ready_ids(P) == ["a"]
    store.claim(P, "agent-1")
    assert [t.id for t in store.done("a", "agent-1")] == ["b"]


# claim


def test_claim_on_an_empty_project_is_none(store: TaskStore, rds: redis.Redis, keys: Keys) -> None:
    assert store.claim(P, "agent-1") is None
    store.add("elsewhere", project="frontend")
    assert store.claim(P, "agent-1") is None
    assert [e["type"] for e in events(rds, keys)] == ["task_added", "task_ready"]


def test_claim_takes_highest_priority_then_oldest(store: TaskStore) -> None:
    for title, priority in [
        ("low", 1),
        ("mid-old", 5),
        ("high", 9),
        ("mid-new", 5),
        ("top", 10),
        ("zero", 0),
    ]:
        store.add(title, project=P, priority=priority)
    order = [t.id for t in iter(lambda: store.claim(P, "agent-1"), None)]
    assert order == ["top", "high", "mid-old", "mid-new", "low", "zero"]


def test_claim_sets_holder_and_attempt(store: TaskStore, rds: redis.Redis, keys: Keys) -> None:
    store.add("a", project=P, priority=7)
    task = store.claim(P, "agent-1")
    assert task is not None
    assert (task.status, task.claimed_by, task.attempt) == ("claimed", "agent-1", 1)
    assert task.claimed_at is not None and task.claimed_at >= task.created_at
    assert rds.zscore(keys.task_claims, "a") == task.claimed_at
    claimed = events(rds, keys)[-1]
    assert claimed["type"] == "task_claimed" and claimed["msg"] == "a claimed by agent-1"
    assert (claimed["from"], claimed["agent"], claimed["project"]) == ("agent-1", "agent-1", P)
    assert claimed["data"] == {"title": "a", "priority": 7, "attempt": 1, "max_attempts": 3}


def test_claim_refuses_bad_agent_ids(store: TaskStore) -> None:
    with pytest.raises(InvalidInput, match="bad agent id 'Agent 1'"):
        store.claim(P, "Agent 1")


# done


def test_done_wakes_a_dependent_only_when_its_last_dep_is_done(store: TaskStore) -> None:
    store.add("a", project=P)
    store.add("b", project=P)
    store.add("d", project=P, after=["a", "b"])
    store.claim(P, "agent-1")
    store.claim(P, "agent-2")
    assert store.done("a", "agent-1", "half") == []
    assert store.get("d").status == "pending"
    woken = store.done("b", "agent-2", "rest")
    assert [(t.id, t.status) for t in woken] == [("d", "ready")]
    assert store.ready_ids(P) == ["d"]


def test_done_records_summary_and_result_note(store: TaskStore, rds: redis.Redis, keys: Keys) -> None:
    store.add("a", project=P)
    store.claim(P, "agent-1")
    store.done("a", "agent-1", "  Implemented JWT auth with refresh tokens\n")
    task = store.get("a")
    assert (task.status, task.summary, task.claimed_by) == (
        "done",
        "Implemented JWT auth with refresh tokens",
        "agent-1",
    )
    assert task.done_at is not None and task.claimed_at is not None and task.done_at >= task.claimed_at
    assert [(n.kind, n.text, n.source_task) for n in task.notes] == [
        ("result", "Implemented JWT auth with refresh tokens", "a")
    ]
    assert rds.zscore(keys.task_claims, "a") is None


def test_dependents_wake_in_their_own_projects(store: TaskStore) -> None:
    store.add("api", project=P)
    store.add("ui", project="frontend", after=["api"])
    store.claim(P, "agent-1")
    store.done("api", "agent-1", "ok")
    assert store.ready_ids("frontend") == ["ui"] and store.ready_ids(P) == []


DONE_CONFLICTS: list[tuple[str, Callable[[TaskStore], object], type[BusError], str]] = [
    (
        "not-the-holder",
        lambda s: s.done("a", "agent-2", "mine"),
        Conflict,
        "task a is claimed by agent-1, not agent-2: only the claimer can finish it",
    ),
    (
        "double-done",
        lambda s: (s.done("a", "agent-1", "x"), s.done("a", "agent-1", "y")),
        Conflict,
        "already done",
    ),
    ("not-claimed", lambda s: s.done("b", "agent-1", "x"), Conflict, "task b is ready, not claimed"),
    ("unknown", lambda s: s.done("nope", "agent-1", "x"), NotFound, "no task nope"),
    (
        "fail-after-done",
        lambda s: (s.done("a", "agent-1", "x"), s.fail("a", "agent-1", "oops")),
        Conflict,
        "task a is already done; a finished task cannot fail",
    ),
    (
        "fail-not-holder",
        lambda s: s.fail("a", "agent-9", "oops"),
        Conflict,
        "claimed by agent-1, not agent-9",
    ),
    ("fail-not-claimed", lambda s: s.fail("b", "agent-1", "oops"), Conflict, "task b is ready, not claimed"),
    ("release-not-claimed", lambda s: s.release("b"), Conflict, "task b is ready, not claimed"),
]


@pytest.mark.parametrize(
    ("act", "error", "message"), [c[1:] for c in DONE_CONFLICTS], ids=[c[0] for c in DONE_CONFLICTS]
)
def test_finishing_refusals(
    store: TaskStore, act: Callable[[TaskStore], object], error: type[BusError], message: str
) -> None:
    store.add("a", project=P, priority=9)
    store.add("b", project=P)
    store.claim(P, "agent-1")
    with pytest.raises(error) as caught:
        act(store)
    assert message in str(caught.value)


def test_a_refused_done_changes_nothing(store: TaskStore, rds: redis.Redis, keys: Keys) -> None:
    store.add("a", project=P)
    store.claim(P, "agent-1")
    before = (store.get("a"), rds.xlen(keys.events))
    with pytest.raises(Conflict):
        store.done("a", "agent-2", "mine")
    assert (store.get("a"), rds.xlen(keys.events)) == before


# fail and retries


def test_fail_retries_until_attempts_run_out(store: TaskStore, rds: redis.Redis, keys: Keys) -> None:
    store.add("flaky", project=P, max_attempts=2)
    store.claim(P, "agent-1")
    retried = store.fail("flaky", "agent-1", "test timeout")
    assert (retried.status, retried.attempt, retried.claimed_by) == ("ready", 1, None)
    assert store.ready_ids(P) == ["flaky"] and rds.zscore(keys.task_claims, "flaky") is None
    store.claim(P, "agent-2")
    final = store.fail("flaky", "agent-2", "still broken")
    assert (final.status, final.attempt) == ("failed", 2)
    assert store.ready_ids(P) == [] and store.claim(P, "agent-1") is None
    assert [(n.kind, n.text) for n in final.notes] == [
        ("test_failure", "test timeout"),
        ("test_failure", "still broken"),
    ]
    failed = [e for e in events(rds, keys) if e["type"] in ("task_failed", "task_ready")][1:]
    assert [(e["type"], e["msg"]) for e in failed] == [
        ("task_failed", "flaky failed (attempt 1/2): test timeout"),
        ("task_ready", "flaky back to ready (will retry)"),
        ("task_failed", "flaky failed (attempt 2/2): still broken"),
    ]
    assert failed[0]["data"] == {
        "reason": "test timeout",
        "attempt": 1,
        "max_attempts": 2,
        "will_retry": True,
    }
    assert failed[2]["data"]["will_retry"] is False
    with pytest.raises(Conflict, match="task flaky is failed, not claimed"):
        store.fail("flaky", "agent-2", "again")


def test_a_task_failed_for_good_takes_its_waiting_dependents_with_it(
    store: TaskStore, rds: redis.Redis, keys: Keys
) -> None:
    store.add("root", project=P, max_attempts=1)
    store.add("child", project=P, after=["root"])
    store.add("grandchild", project=P, after=["child"], draft=True)
    store.add("other", project=P)
    store.claim(P, "agent-1")
    mark = last_id(rds, keys)
    store.fail("root", "agent-1", "cannot be done")
    assert {t.id: t.status for t in store.list()} == {
        "root": "failed",
        "child": "failed",
        "grandchild": "failed",
        "other": "ready",
    }
    after = events(rds, keys, mark)[1:]
    assert [(e["type"], e["task"]) for e in after] == [
        ("task_failed", "root"),
        ("task_failed", "child"),
        ("task_failed", "grandchild"),
    ]
    assert after[1]["data"]["blocked_by"] == "root" and after[1]["data"]["will_retry"] is False
    assert after[1]["msg"] == "child failed: dependency root failed"


def test_long_texts_are_cut_in_events_and_kept_whole_in_the_task(
    store: TaskStore, rds: redis.Redis, keys: Keys
) -> None:
    store.add("a", project=P, max_attempts=2)
    store.claim(P, "agent-1")
    reason = "x" * 199 + "\u00e9 first line\n" + "trace line\n" * 500
    store.fail("a", "agent-1", reason)
    store.claim(P, "agent-1")
    summary = "\u00e9" * 3000
    store.done("a", "agent-1", summary)
    failed, done = [e for e in events(rds, keys) if e["type"] in ("task_failed", "task_done")]
    assert failed["msg"] == "a failed (attempt 1/2): " + "x" * 199 + "\u2026"
    assert failed["data"]["reason"].endswith("\u2026") and len(failed["data"]["reason"].encode()) <= 2003
    assert done["data"]["summary"] == "\u00e9" * 1000 + "\u2026"
    task = store.get("a")
    assert task.summary == summary
    assert [n.text for n in task.notes] == [reason.strip(), summary]


# release and reclaim


def test_release_gives_the_attempt_back(store: TaskStore, rds: redis.Redis, keys: Keys) -> None:
    store.add("a", project=P)
    store.claim(P, "agent-1")
    task = store.release("a")
    assert (task.status, task.attempt, task.claimed_by, task.claimed_at) == ("ready", 0, None, None)
    assert store.ready_ids(P) == ["a"] and rds.zcard(keys.task_claims) == 0
    released = events(rds, keys)[-1]
    assert (released["type"], released["msg"]) == ("task_ready", "a back to ready (released)")
    assert released["data"]["previous_agent"] == "agent-1"


def test_reclaim_releases_only_stale_claims_of_dead_agents(
    store: TaskStore, rds: redis.Redis, keys: Keys
) -> None:
    for title in ("a", "b", "c"):
        store.add(title, project=P)
    store.claim(P, "agent-dead")
    store.claim(P, "agent-live")
    store.claim(P, "agent-dead")
    assert store.reclaim(3600, lambda agent: False) == []
    released = store.reclaim(0, lambda agent: agent != "agent-dead")
    assert sorted(released) == ["a", "c"]
    assert {t.id: t.status for t in store.list()} == {"a": "ready", "b": "claimed", "c": "ready"}
    last = events(rds, keys)[-2:]
    assert {e["data"]["reason"] for e in last} == {"reclaimed"}
    assert store.reclaim(0, lambda agent: False) == ["b"]


# notes


def test_claim_inherits_the_deps_results_observations_and_handoffs(store: TaskStore) -> None:
    store.add("grandparent", project=P)
    store.add("parent", project=P, after=["grandparent"])
    store.add("sibling", project=P)
    store.add("child", project=P, after=["parent", "sibling"], priority=9)
    store.observe("grandparent", "old news")
    store.claim(P, "agent-1")
    store.done("grandparent", "agent-1", "gp result")
    parent = store.claim(P, "agent-1")
    assert parent is not None
    assert [(n.kind, n.source_task) for n in parent.notes] == [
        ("observation", "grandparent"),
        ("result", "grandparent"),
    ]
    store.observe("parent", "the API uses JWT")
    store.handoff("parent", "start from internal/auth")
    store.add_note("parent", "test_failure", "flaky once")
    store.done("parent", "agent-1", "designed it")
    sibling = store.claim(P, "agent-2")
    assert sibling is not None and sibling.id == "sibling"
    store.done("sibling", "agent-2", "sibling result")
    store.observe("child", "my own note")
    child = store.claim(P, "agent-3")
    assert child is not None and child.id == "child"
    inherited = [(n.kind, n.text, n.source_task) for n in child.notes]
    assert inherited == [
        ("observation", "the API uses JWT", "parent"),
        ("handoff", "start from internal/auth", "parent"),
        ("result", "designed it", "parent"),
        ("result", "sibling result", "sibling"),
        ("observation", "my own note", "child"),
    ]
    store.fail("child", "agent-3", "tests red")
    again = store.claim(P, "agent-3")
    assert again is not None
    assert [(n.kind, n.source_task) for n in again.notes] == [(kind, src) for kind, _, src in inherited] + [
        ("test_failure", "child")
    ]


@pytest.mark.parametrize(
    ("kind", "text", "error", "message"),
    [
        ("inherited", "x", InvalidInput, "bad note kind 'inherited'"),
        ("observation", "   ", InvalidInput, "the note is empty"),
        ("observation", "x" * 300_000, InvalidInput, "the note is 300000 bytes"),
    ],
    ids=["bad-kind", "empty", "too-big"],
)
def test_bad_notes_are_refused(
    store: TaskStore, kind: str, text: str, error: type[BusError], message: str
) -> None:
    store.add("a", project=P)
    with pytest.raises(error, match=message):
        store.add_note("a", kind, text)


def test_notes_on_an_unknown_task(store: TaskStore) -> None:
    with pytest.raises(NotFound, match="no task ghost"):
        store.observe("ghost", "hello")


# edit, delete, reading


def test_edit_changes_fields_and_requeues_on_priority(store: TaskStore) -> None:
    store.add("a", project=P, priority=5)
    store.add("b", project=P, priority=5)
    assert store.ready_ids(P) == ["a", "b"]
    edited = store.edit("b", title="B!", body="more", priority=6)
    assert (edited.title, edited.body, edited.priority) == ("B!", "more", 6)
    assert store.ready_ids(P) == ["b", "a"]
    with pytest.raises(InvalidInput, match="bad priority 11"):
        store.edit("a", priority=11)
    with pytest.raises(InvalidInput, match="1048576 bytes"):
        store.edit("a", body="x" * 1_048_576)
    with pytest.raises(NotFound, match="no task zz"):
        store.edit("zz", title="x")


def test_delete_refuses_while_others_depend_on_it(store: TaskStore, rds: redis.Redis, keys: Keys) -> None:
    store.add("a", project=P)
    store.add("b", project=P, after=["a"])
    store.add("c", project=P, after=["a"])
    with pytest.raises(Conflict, match="task a cannot be deleted: b, c depend on it"):
        store.delete("a")
    store.delete("b")
    store.delete("c")
    store.observe("a", "note")
    store.delete("a")
    assert rds.keys(keys.namespace + "task:*") == []
    assert (
        rds.zcard(keys.tasks) == 0 and rds.zcard(keys.ready(P)) == 0 and rds.zcard(keys.project_tasks(P)) == 0
    )
    with pytest.raises(NotFound):
        store.delete("a")


def test_delete_refuses_a_claimed_task(store: TaskStore) -> None:
    store.add("a", project=P)
    store.claim(P, "agent-1")
    with pytest.raises(Conflict, match="claimed by agent-1: release it"):
        store.delete("a")


def test_get_unknown_and_bad_ids(store: TaskStore) -> None:
    with pytest.raises(NotFound, match="no task nothing-here: check the id"):
        store.get("nothing-here")
    with pytest.raises(InvalidInput, match="bad task id"):
        store.get("No Such")


def test_list_and_counts(store: TaskStore) -> None:
    store.add("a", project=P, priority=1)
    store.add("b", project=P, priority=9)
    store.add("c", project=P, after=["a"])
    store.add("d", project=P, draft=True)
    store.add("e", project="frontend", priority=10)
    store.claim(P, "agent-1")
    assert [t.id for t in store.list()] == ["e", "b", "c", "d", "a"]
    assert [t.id for t in store.list(P)] == ["b", "c", "d", "a"]
    assert [t.id for t in store.list(P, "pending")] == ["c"]
    assert [t.id for t in store.list(status="ready")] == ["e", "a"]
    assert store.counts(P) == {"draft": 1, "pending": 1, "ready": 1, "claimed": 1, "done": 0, "failed": 0}
    assert store.counts("empty") == dict.fromkeys(STATUSES, 0)
    with pytest.raises(InvalidInput, match="bad status 'blocked'"):
        store.list(status="blocked")


# events


def test_the_seeds_example_graph_event_by_event(store: TaskStore, rds: redis.Redis, keys: Keys) -> None:
    store.add("Design auth", project=P, task_id="design-auth", priority=8)
    store.add("Implement endpoints", project=P, task_id="impl-endpoints", priority=7, after=["design-auth"])
    store.add("Write tests", project=P, task_id="write-tests", priority=5, after=["design-auth"])
    assert store.counts(P)["ready"] == 1 and store.counts(P)["pending"] == 2
    assert store.claim(P, "agent-1") is not None
    woken = store.done("design-auth", "agent-1", "Implemented JWT auth with refresh tokens")
    assert [t.id for t in woken] == ["impl-endpoints", "write-tests"]
    assert store.claim(P, "agent-2") is not None
    assert store.claim(P, "agent-1") is not None
    store.done("impl-endpoints", "agent-2", "Added REST endpoints with validation")
    store.fail("write-tests", "agent-1", "test timeout")
    assert store.claim(P, "agent-1") is not None
    store.done("write-tests", "agent-1", "Added 47 tests, all passing")
    assert store.claim(P, "agent-1") is None

    got = events(rds, keys)
    assert [(e["type"], e["task"], e["agent"], e["msg"]) for e in got] == [
        ("task_added", "design-auth", None, "design-auth added"),
        ("task_ready", "design-auth", None, "design-auth ready"),
        ("task_added", "impl-endpoints", None, "impl-endpoints added"),
        ("task_added", "write-tests", None, "write-tests added"),
        ("task_claimed", "design-auth", "agent-1", "design-auth claimed by agent-1"),
        ("task_done", "design-auth", "agent-1", "design-auth completed by agent-1"),
        ("task_ready", "impl-endpoints", None, "impl-endpoints ready"),
        ("task_ready", "write-tests", None, "write-tests ready"),
        ("task_claimed", "impl-endpoints", "agent-2", "impl-endpoints claimed by agent-2"),
        ("task_claimed", "write-tests", "agent-1", "write-tests claimed by agent-1"),
        ("task_done", "impl-endpoints", "agent-2", "impl-endpoints completed by agent-2"),
        ("task_failed", "write-tests", "agent-1", "write-tests failed (attempt 1/3): test timeout"),
        ("task_ready", "write-tests", None, "write-tests back to ready (will retry)"),
        ("task_claimed", "write-tests", "agent-1", "write-tests claimed by agent-1"),
        ("task_done", "write-tests", "agent-1", "write-tests completed by agent-1"),
    ]
    assert all(e["project"] == P for e in got)
    assert got[2]["data"] == {
        "title": "Implement endpoints",
        "priority": 7,
        "status": "pending",
        "after": ["design-auth"],
    }
    assert got[0]["data"]["after"] == []
    assert got[5]["data"] == {
        "title": "Design auth",
        "summary": "Implemented JWT auth with refresh tokens",
        "attempt": 1,
        "ready": ["impl-endpoints", "write-tests"],
    }
    assert got[6]["data"] == {
        "reason": "deps_done",
        "title": "Implement endpoints",
        "priority": 7,
        "unblocked_by": "design-auth",
    }
    assert got[13]["data"]["attempt"] == 2
    assert got[14]["data"]["ready"] == []


def test_events_have_the_envelope_of_make_event(store: TaskStore, rds: redis.Redis, keys: Keys) -> None:
    before = dt.datetime.fromtimestamp(int(rds.time()[0]), dt.UTC)
    store.add('Paths like a/b and \u00e9 "quotes"', project=P, task_id="shape")
    after = dt.datetime.fromtimestamp(int(rds.time()[0]), dt.UTC)
    entry = entries(rds, keys)[0][1]
    assert list(entry) == [EVENT_FIELD]
    raw = entry[EVENT_FIELD]
    assert raw.startswith('{"ts":"') and '"type":"task_added","from":"system","project":"backend"' in raw
    assert "a/b" in raw and "\u00e9" in raw
    event = Event.from_entry("1-0", raw)
    assert event.known and event.sender == "system" and event.task == "shape" and event.agent is None
    assert event.data["title"] == 'Paths like a/b and \u00e9 "quotes"'
    assert before <= dt.datetime.fromisoformat(event.ts) <= after


@pytest.mark.parametrize(
    "day",
    [
        dt.date(1970, 1, 1),
        dt.date(2000, 2, 29),
        dt.date(2000, 3, 1),
        dt.date(2024, 12, 31),
        dt.date(2100, 3, 1),
        dt.date(1999, 12, 31),
        dt.date(2026, 11, 25),
    ],
    ids=str,
)
def test_the_scripts_calendar_matches_pythons(rds: redis.Redis, keys: Keys, day: dt.date) -> None:
    days = (day - dt.date(1970, 1, 1)).days
    script = _source("note").split("local CLOCK")[0] + "\nreturn {civil(tonumber(ARGV[8]))}"
    templates = [keys.task("\x01")] * 6
    got = rds.eval(script, 4, "k1", "k2", "k3", "k4", *templates, 100, days)
    assert got == [day.year, day.month, day.day]


def test_events_stream_is_trimmed(rds: redis.Redis, keys: Keys) -> None:
    small = TaskStore(rds, keys, events_maxlen=100)
    for i in range(400):
        small.add(f"t{i}", project=P)
    assert rds.xlen(keys.events) < 400
