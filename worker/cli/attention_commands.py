"""`ib attention`: what waits on a person, oldest first, with how long (as /attention shows it)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import typer

from worker.cli.context import Context
from worker.cli.output import console

if TYPE_CHECKING:
    from bus.inbox.attention import Item
from worker.terminal_text import printable


def attention(as_json: bool = typer.Option(False, "--json", help="print JSON")) -> None:
    """What waits on you (permissions, questions, waiting and stuck agents), oldest first, with how long.

    Each stays here until answered (ib approve / deny / answer / send, a Telegram button or reply) or its
    agent moves on; unanswered, the bot repeats it (IB_ATTENTION_*).
    Example: ib attention
    """
    from bus.inbox.attention import listing

    rt = Context().runtime
    items, now = rt.attention.open_items(), rt.attention.now()
    if as_json:
        print(json.dumps(attention_rows(items, now), indent=2, ensure_ascii=False))
        return
    if not items:
        console().print("nothing waits on you")
    for line in listing(items, now):
        print(printable(line))


def attention_rows(items: list[Item], now: float) -> list[dict[str, object]]:
    """`ib attention --json`: each open item and how long it has waited, in seconds."""
    return [{**json.loads(i.model_dump_json()), "waited": round(now - i.raised_at, 3)} for i in items]
