"""Merge requests as data, the events that report them, and the queue's bookkeeping on a fake Redis."""

from __future__ import annotations

import json
from typing import Any, cast

import fakeredis
import pytest

from bus.tasks.merge_order import Placed
from bus.tasks.merge_request import MergeRequest
from bus.tasks.merges import MergeStore, result_event
from bus.wire.keys import Keys

REQ = MergeRequest(
    id="7",
    project="backend",
    agent="impl",
    branch="agent/impl",
    target="main",
    worker="w1",
    task="impl",
    title="Add endpoints",
)


@pytest.mark.parametrize(
    ("changes", "type_", "msg", "data"),
    [
        (
            {"status": "merged", "sha": "a1b2c3d4e5", "commits": 2},
            "merge_merged",
            "Merged agent/impl → main (a1b2c3d)",
            {"sha": "a1b2c3d4e5", "commits": 2},
        ),
        (
            {"status": "conflict", "files": ("api.txt", "b.txt")},
            "merge_conflict",
            "Merge conflict on agent/impl → main; conflicted files:\n  - api.txt\n  - b.txt",
            {"files": ["api.txt", "b.txt"]},
        ),
        (
            {"status": "failed", "error": "dirty worktree"},
            "merge_failed",
            "Merge of agent/impl → main failed: dirty worktree",
            {"error": "dirty worktree"},
        ),
    ],
    ids=["merged", "conflict", "failed"],
)
def test_result_event(changes: dict[str, Any], type_: str, msg: str, data: dict[str, Any]) -> None:
    event = result_event(REQ.replace(**changes))
    assert (event["type"], event["msg"], event["project"], event["agent"], event["task"]) == (
        type_,
        msg,
        "backend",
        "impl",
        "impl",
    )
    assert event["data"] == {"merge": "7", "branch": "agent/impl", "target": "main", **data}


def test_request_survives_its_hash() -> None:
    full = REQ.replace(status="conflict", files=("a b.txt", "ü.txt"), requested_at=1.5, finished_at=2.5)
    assert MergeRequest.from_hash(full.to_hash()) == full


def test_queue_is_fifo_and_finishing_takes_the_head_out() -> None:
    client = fakeredis.FakeRedis(decode_responses=True)
    keys = Keys("t:")
    store = MergeStore(client, keys, 1000)
    first = store.enqueue(project="p", agent="a", branch="agent/a", target="main", worker="w")
    second = store.enqueue(project="p", agent="b", branch="agent/b", target="main", worker="w")
    assert [r.agent for r in store.queue("p")] == ["a", "b"]
    assert store.open_for("p", "b") == second and store.open_for("p", "c") is None
    assert (store.place(first), store.place(second)) == (1, 2)
    head = store.head("p")
    assert head is not None and head.request == first and head.reason == ""
    store.finish(store.mark(first, status="merging").replace(status="merged", sha="abc"))
    assert store.head("p") == Placed(second)
    assert store.place(second) == 1 and store.place(first) is None  # gone from the queue
    assert store.get(first.id).status == "merged" and client.ttl(keys.merge(first.id)) > 0
    kinds = [f["e"] for _i, f in cast(list[tuple[str, dict[str, str]]], client.xrange(keys.events))]
    assert ['"merge_ready"' in k for k in kinds] == [True, True, False]
    assert '"merge_merged"' in kinds[-1] and "queue position 2" in kinds[1]
    client.delete(keys.merge(second.id))
    assert store.head("p") is None and store.projects() == ["p"]


def test_the_smaller_overlapping_request_is_the_head_and_its_event_says_why() -> None:
    client = fakeredis.FakeRedis(decode_responses=True)
    keys = Keys("t:")
    store = MergeStore(client, keys, 1000)
    big = store.enqueue(
        project="p", agent="a", branch="agent/a", target="main", worker="w", size=80, changed=("calc.py",)
    )
    small = store.enqueue(
        project="p", agent="b", branch="agent/b", target="main", worker="w", size=3, changed=("calc.py",)
    )
    assert [r.id for r in store.queue("p")] == [big.id, small.id]  # the list keeps arrival order
    assert [p.request.id for p in store.ordered("p")] == [small.id, big.id]
    head = store.head("p")
    assert head is not None and head.request == small and head.reason.startswith(f"before merge {big.id} (a,")
    event = json.loads(
        [f["e"] for _i, f in cast(list[tuple[str, dict[str, str]]], client.xrange(keys.events))][-1]
    )
    assert event["msg"] == (
        f"Merging agent/b → main (queue position 1: before merge {big.id} (a, 80 changed lines, both change "
        "calc.py): the smaller change goes first (3 changed lines))"
    )
    assert (event["data"]["position"], event["data"]["size"]) == (1, 3)
    assert event["data"]["order"] == head.reason
