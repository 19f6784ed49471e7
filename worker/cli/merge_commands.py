"""`ib merge-queue`: each project's merge queue in the order it will be merged (bus.tasks.merge_order), with
the size of each change and, for a request that goes before earlier ones, why."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import typer

from worker.cli.context import Context

if TYPE_CHECKING:
    from bus.tasks.merge_order import Placed


def queue_lines(project: str, order: list[Placed]) -> list[str]:
    """One line a request, next to merge first; a second, indented line says why when it jumped ahead."""
    lines = [f"{project}:"]
    for n, place in enumerate(order, 1):
        req = place.request
        size = f"{req.size} lines, {len(req.changed)} files" if req.changed else "change unknown"
        lines.append(
            f"  {n}. merge {req.id}  {req.agent}  {req.branch} → {req.target}  {req.status} ({size})"
        )
        if place.reason:
            lines.append(f"       {place.reason}")
    return lines


def merge_queue(
    project: str = typer.Option(None, "--project", "-p", help="one project (default: every project)"),
    as_json: bool = typer.Option(False, "--json", help="print JSON"),
) -> None:
    """Show the merge queues in merge order: the smaller of two overlapping changes goes first, and says why.

    Example: ib merge-queue --project shop
    """
    from bus.tasks.merges import MergeStore

    ctx = Context()
    store = MergeStore(ctx.client, ctx.keys, ctx.settings.events_maxlen)
    queues = {p: store.ordered(p) for p in ([project] if project else store.projects())}
    queues = {p: order for p, order in queues.items() if order}
    if as_json:
        out = {p: [{**o.request.as_dict(), "reason": o.reason} for o in order] for p, order in queues.items()}
        print(json.dumps(out, indent=2, ensure_ascii=False))
        return
    if not queues:
        print(f"the merge queue of {project} is empty" if project else "every merge queue is empty")
    for p, order in queues.items():
        print("\n".join(queue_lines(p, order)))
