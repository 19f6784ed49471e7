"""The merge order (bus/tasks/merge_order.py), table-driven: arrival order, except the smaller of two requests
that change a file in common goes first, a merge under way stays first, and each request put ahead says
why."""

from __future__ import annotations

import pytest

from bot.handlers.task_handlers import merge_queue_text
from bus.tasks.merge_order import merge_order, position
from bus.tasks.merge_request import MergeRequest


def req(merge_id: str, size: int, *changed: str, status: str = "queued") -> MergeRequest:
    return MergeRequest(id=merge_id, agent=f"agent-{merge_id}", size=size, changed=changed, status=status)


CASES = [
    pytest.param([], [], id="empty"),
    pytest.param([req("1", 50, "a.py"), req("2", 5, "b.py")], ["1", "2"], id="no-overlap-keeps-arrival"),
    pytest.param([req("1", 50, "a.py"), req("2", 5, "a.py")], ["2", "1"], id="smaller-overlapping-first"),
    pytest.param([req("1", 5, "a.py"), req("2", 50, "a.py")], ["1", "2"], id="smaller-already-first"),
    pytest.param([req("1", 7, "a.py"), req("2", 7, "a.py")], ["1", "2"], id="equal-sizes-keep-arrival"),
    pytest.param(
        [req("1", 50, "a.py", status="merging"), req("2", 5, "a.py")], ["1", "2"], id="merge-under-way-stays"
    ),
    pytest.param(
        [req("1", 50, "a.py"), req("2", 9, "b.py"), req("3", 5, "a.py")],
        ["2", "3", "1"],
        id="unrelated-earlier-one-keeps-its-turn",
    ),
    pytest.param(
        [req("1", 90, "a.py"), req("2", 40, "a.py", "b.py"), req("3", 5, "b.py")],
        ["3", "2", "1"],
        id="chain-smallest-first",
    ),
    pytest.param(
        [req("1", 90, "a.py"), req("2", 0), req("3", 5, "a.py")],
        ["2", "3", "1"],
        id="unknown-change-no-overlap",
    ),
    pytest.param(
        [req("1", 30, "a.py"), req("2", 20, "a.py"), req("3", 10, "a.py")],
        ["3", "2", "1"],
        id="three-on-one-file",
    ),
]


@pytest.mark.parametrize(("queue", "expected"), CASES)
def test_merge_order(queue: list[MergeRequest], expected: list[str]) -> None:
    assert [p.request.id for p in merge_order(queue)] == expected


def test_a_request_put_ahead_says_why_and_the_others_say_nothing() -> None:
    order = merge_order(
        [req("1", 120, "calc.py", "util.py"), req("2", 9, "notes.md"), req("3", 4, "calc.py")]
    )
    reasons = {p.request.id: p.reason for p in order}
    assert reasons["3"] == (
        "before merge 1 (agent-1, 120 changed lines, both change calc.py): "
        "the smaller change goes first (4 changed lines)"
    )
    assert reasons["1"] == "" and reasons["2"] == ""


def test_a_reason_counts_the_files_past_three() -> None:
    files = ("a.py", "b.py", "c.py", "d.py", "e.py")
    order = merge_order([req("1", 100, *files), req("2", 1, *files)])
    assert "both change a.py, b.py, c.py and 2 more files" in order[0].reason
    assert "(1 changed line)" in order[0].reason


def test_position_of_a_request() -> None:
    queue = [req("1", 50, "a.py"), req("2", 9, "b.py"), req("3", 5, "a.py")]
    assert position(queue, "2") == (1, "")
    assert position(queue, "3")[0] == 2 and position(queue, "3")[1].startswith("before merge 1")
    with pytest.raises(ValueError, match="merge 9 is not in the queue"):
        position(queue, "9")


def test_the_merge_queue_as_a_telegram_message() -> None:
    order = merge_order([req("1", 120, "calc.py"), req("2", 4, "calc.py"), req("3", 0)])
    assert merge_queue_text("shop", order).splitlines() == [
        "<b>shop</b>: 3 in the merge queue",
        "1. agent-2 ( → , queued, 4 lines)",
        "   ↑ before merge 1 (agent-1, 120 changed lines, both change calc.py): the smaller change "
        "goes first (4 changed lines)",
        "2. agent-1 ( → , queued, 120 lines)",
        "3. agent-3 ( → , queued, size unknown)",
    ]
    assert merge_queue_text("a<b", []) == "The merge queue of a&lt;b is empty."
