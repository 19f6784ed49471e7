"""The lines of Approve's one message (bot.render.review_render): where the approved change stands, step by
step."""

from __future__ import annotations

import pytest

from bot.render.review_render import approval, merge_stage, queued_stage
from bus.tasks.merge_request import MergeRequest

REQ = MergeRequest(id="7", project="shop", agent="a1", branch="agent/a1", target="main", worker="w")


@pytest.mark.parametrize(
    ("req", "place", "said"),
    [
        (REQ, 3, "⏳ in the merge queue, position 3"),
        (REQ.replace(status="merging"), None, "⇢ merging into main…"),
        (REQ.replace(status="merged", sha="0123456789"), None, "✓ merged into main (0123456)"),
        (
            REQ.replace(status="conflict", files=("a.py", "b.py")),
            None,
            "⚠ merge conflict in a.py, b.py; nothing was merged",
        ),
        (REQ.replace(status="failed", error="no such branch"), None, "✗ merge failed: no such branch"),
        (None, None, "? its merge request is gone; /merges shows the queue"),
    ],
    ids=["queued", "merging", "merged", "conflict", "failed", "gone"],
)
def test_merge_stage(req: MergeRequest | None, place: int | None, said: str) -> None:
    assert merge_stage(req, place) == said


@pytest.mark.parametrize(
    ("place", "said"),
    [(2, "in the merge queue, position 2"), (None, "in the merge queue"), ("2", "in the merge queue")],
    ids=["position", "none-said", "not-a-number"],
)
def test_queued_stage(place: object, said: str) -> None:
    assert queued_stage(place) == said


def test_approval_names_the_dropped_comments_only_when_there_are_some() -> None:
    assert (
        approval("a1", "shop → main", "⏳ in the merge queue", 0)
        == "✓ a1 approved (shop → main)\n⏳ in the merge queue"
    )
    assert approval("a1", "shop → main", "x", 2).splitlines()[2] == (
        "2 comment(s) not sent with Request changes were dropped"
    )
