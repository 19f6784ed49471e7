"""What an agent program printed, read from its transcript or event stream: one `OutputItem` per text,
tool call, tool result or new prompt, the same for every program (the bot and `ib look --follow` show it)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

OutputKind = Literal["text", "tool_use", "tool_result", "prompt"]


@dataclass(frozen=True)
class OutputItem:
    """One thing the agent printed: its text, a tool it used, or that tool's result, summarised."""

    kind: OutputKind
    text: str
    tool: str | None = None
    ts: str = ""
    tokens: int | None = None  # the context's size after the model's answer it came in, when known
