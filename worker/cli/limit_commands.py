"""`ib limits`: each account's usage limit, its reset and the agents parked on it."""

from __future__ import annotations

import json
import time

import typer

from bus.costs.usage_limits import Limit, limit_lines
from worker.cli.context import Context


def limits(as_json: bool = typer.Option(False, "--json", help="one JSON object, for scripts")) -> None:
    """Accounts held by their plan's usage limit: until when, since when, the parked agents.

    An agent whose turn ends on its usage limit is parked, and the worker resumes it at the reset.
    Example: ib limits --json
    """
    ctx = Context()
    found = limited(ctx)
    if as_json:
        print(json.dumps({"limits": [limit_record(limit) for limit in found]}, ensure_ascii=False))
        return
    if not found:
        print("no account is limited")
    now = time.time()
    for limit in found:
        for line in limit_lines(limit, now):
            print(line)


def limited(ctx: Context) -> list[Limit]:
    """Every account held by its usage limit."""
    from bus.stores.limit_store import LimitStore

    return LimitStore(ctx.client, ctx.keys).all()


def limit_record(limit: Limit) -> dict[str, object]:
    return {
        "account": limit.account,
        "reset_at": limit.reset_at,
        "window": limit.window,
        "since": limit.since,
        "source": limit.source,
        "note": limit.note,
        "agents": list(limit.agents),
    }
