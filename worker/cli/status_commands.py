"""`ib status-node` (keep the status block in CLAUDE.md up to date) and `ib messages` (what agents queued
for the person with `ib send user`)."""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path

import typer

from bus.errors import BusUnavailable
from bus.inbox.ages import format_age
from bus.wire.address import masked_url
from worker.cli.context import Context
from worker.cli.output import console
from worker.frontends.status_block import STATUS_FILE
from worker.terminal_text import printable


def _target(ctx: Context, file: str) -> Path:
    """A relative --file is taken from the repository root (also inside an agent's worktree)."""
    path = Path(file).expanduser()
    if path.is_absolute():
        return path
    return (ctx.settings.repository(ctx.cwd) or Path(ctx.cwd)) / path


def status_node(
    file: str = typer.Option(
        STATUS_FILE, "--file", help="the file to keep the block in (from the repo root)"
    ),
    auto: bool = typer.Option(
        False, "--auto", help="stop after the last root agent (the worker starts it so)"
    ),
    once: bool = typer.Option(False, "--once", help="write the block once and exit"),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="log every write"),
) -> None:
    """Keep the <ittybus-status> block in CLAUDE.md: root agents and the messages agents sent you.

    The worker starts it with the first root agent; run it by hand to keep another file, or with --once.
    Example: ib status-node --file CLAUDE.md
    """
    import redis

    from worker.frontends.status_node import StatusNode

    logging.basicConfig(
        level=logging.INFO if verbose or auto else logging.WARNING, format="%(asctime)s %(name)s %(message)s"
    )
    ctx = Context()
    settings = ctx.settings
    node = StatusNode(
        ctx.client,
        ctx.blocking_redis(),
        ctx.keys,
        _target(ctx, file),
        debounce=settings.status_debounce,
        max_messages=settings.status_max_messages,
        auto=auto,
        create=not auto,
        heartbeat_ttl=settings.heartbeat_ttl,
    )
    try:
        if once:
            console().print(f"{'updated' if node.update() else 'unchanged'}: {node.path}")
            return
        node.stop_on_signals()
        if not auto:
            console().print(f"keeping the status block in {node.path} (Ctrl-C stops)")
        node.run()
    except redis.RedisError as e:
        raise BusUnavailable(f"lost the bus at {masked_url(ctx.url)}: {e}") from e


def messages(as_json: bool = typer.Option(False, "--json", help="print JSON")) -> None:
    """Messages agents queued for you with `ib send user`, oldest first; clear them with `ib acknowledge`.

    Example: ib messages --json
    """
    from worker.agents.user_messages import store

    pending = store(Context().runtime).pending()
    if as_json:
        print(json.dumps([m.to_dict() for m in pending], indent=2, ensure_ascii=False))
        return
    if not pending:
        console().print("no pending messages")
    for m in pending:
        text = printable(m.text, keep="\n")
        console().print(
            f"{m.id}  {m.kind:<8}  {m.sender}  {format_age(time.time() - m.ts)} ago: {text}", markup=False
        )
