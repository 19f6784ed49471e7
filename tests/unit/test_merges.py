"""Merge requests as data, the events that report them, and the queue's bookkeeping on a fake Redis."""

from __future__ import annotations

from typing import Any, cast

import fakeredis
import pytest

from bus.keys import Keys
from bus.merges import MergeRequest, MergeStore, result_event

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
    head = store.head("p")
    assert head == first
    store.finish(store.mark(first, status="merging").replace(status="merged", sha="abc"))
    assert store.head("p") == second
    assert store.get(first.id).status == "merged" and client.ttl(keys.merge(first.id)) > 0
    kinds = [f["e"] for _i, f in cast(list[tuple[str, dict[str, str]]], client.xrange(keys.events))]
    assert ['"merge_ready"' in k for k in kinds] == [True, True, False]
    assert '"merge_merged"' in kinds[-1] and "queue position 2" in kinds[1]
    client.delete(keys.merge(second.id))
    assert store.head("p") is None and store.projects() == ["p"]
