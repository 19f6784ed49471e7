"""Writing to the terminal: JSONL lines that reach a pipe at once, rich's console made on first use, and
the one-line error format."""

from __future__ import annotations

import sys
from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console

    from bus.events.envelope import Envelope


def emit_jsonl(event: Envelope) -> None:
    from bus.events.envelope import to_jsonl

    sys.stdout.write(to_jsonl(event) + "\n")
    sys.stdout.flush()


@cache
def console(*, highlight: bool = False) -> Console:
    """The terminal for rich output; rich loads only for the commands that print through it."""
    from rich.console import Console

    return Console(highlight=highlight)
