"""The order a project's merge queue is merged in. Pure: requests in arrival order in, the order out.

Arrival order, except that of two waiting requests that change a file in common, the smaller change (fewer
changed lines) goes first: it lands sooner and leaves the bigger one less to rebase over, and if they do
collide the conflict is resolved on the bigger branch, where most of the context is. A merge already under
way stays first. Each request taken out of arrival order carries the reason, in words.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from bus.tasks.merge_request import MergeRequest

MAX_NAMED = 3  # files named in a reason; the rest are counted


@dataclass(frozen=True)
class Placed:
    """One request in merge order; `reason` says why it goes before earlier requests ("" when it does not)."""

    request: MergeRequest
    reason: str = ""


def overlap(a: MergeRequest, b: MergeRequest) -> tuple[str, ...]:
    """The files both requests change, sorted."""
    return tuple(sorted(set(a.changed) & set(b.changed)))


def merge_order(queue: Sequence[MergeRequest]) -> list[Placed]:
    """`queue` (arrival order) in the order to merge it: a merge under way first, then, repeatedly, the
    earliest request that waits for no smaller request changing a file it changes (equal sizes: the earlier
    one first). Requests without a recorded change (size 0, no files) overlap nothing and keep their place."""
    arrival = {req.id: n for n, req in enumerate(queue)}

    def key(req: MergeRequest) -> tuple[int, int]:
        return (req.size, arrival[req.id])

    placed = [Placed(req) for req in queue if req.status == "merging"]
    waiting = [req for req in queue if req.status != "merging"]
    while waiting:
        pick = next(
            req
            for req in waiting
            if not any(key(other) < key(req) and overlap(req, other) for other in waiting if other is not req)
        )
        passed = [other for other in waiting if arrival[other.id] < arrival[pick.id] and overlap(pick, other)]
        placed.append(Placed(pick, _reason(pick, passed)))
        waiting.remove(pick)
    return placed


def _reason(pick: MergeRequest, passed: list[MergeRequest]) -> str:
    """Why `pick` goes before the earlier requests in `passed` (those that change a file it changes)."""
    if not passed:
        return ""
    ahead = "; ".join(
        f"merge {other.id} ({other.agent}, {_lines(other.size)}, {_files(overlap(pick, other))})"
        for other in passed
    )
    return f"before {ahead}: the smaller change goes first ({_lines(pick.size)})"


def _lines(size: int) -> str:
    return f"{size} changed line" + ("" if size == 1 else "s")


def _files(paths: tuple[str, ...]) -> str:
    named = ", ".join(paths[:MAX_NAMED])
    more = len(paths) - MAX_NAMED
    return "both change " + named + (f" and {more} more file" + ("s" if more > 1 else "") if more > 0 else "")


def position(queue: Sequence[MergeRequest], merge_id: str) -> tuple[int, str]:
    """Where `merge_id` stands in merge order (1 = next) and why, when it is out of arrival order."""
    for n, place in enumerate(merge_order(queue), 1):
        if place.request.id == merge_id:
            return n, place.reason
    raise ValueError(f"merge {merge_id} is not in the queue")
