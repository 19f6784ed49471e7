"""`ib attention`: what waits on a person, oldest first, with how long (as /attention shows it)."""

from __future__ import annotations

import json

import typer
from rich.console import Console

from bus.attention import listing
from worker.cli.context import Context
from worker.terminal_text import printable

console = Console(highlight=False)


def attention(as_json: bool = typer.Option(False, "--json", help="print JSON")) -> None:
    """What waits on you (permissions, questions, waiting and stuck agents), oldest first, with how long.

    Each stays here until answered (ib approve / deny / answer / send, a Telegram button or reply) or its
    agent moves on; unanswered, the bot repeats it (IB_ATTENTION_*).
    Example: ib attention
    """
    rt = Context().runtime
    items, now = rt.attention.open_items(), rt.attention.now()
    if as_json:
        rows = [{**json.loads(i.model_dump_json()), "waited": round(now - i.raised_at, 3)} for i in items]
        print(json.dumps(rows, indent=2, ensure_ascii=False))
        return
    if not items:
        console.print("nothing waits on you")
    for line in listing(items, now):
        print(printable(line))
