"""What the scripted Messages API answers, one turn at a time: assistant replies made of text and tool
calls, and API errors. Pure data and builders; `sse` turns them into the bytes the API would send."""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

_ids = itertools.count(1)


@dataclass(frozen=True)
class Text:
    text: str


@dataclass(frozen=True)
class ToolUse:
    name: str
    input: dict[str, Any]
    id: str = field(default_factory=lambda: f"toolu_fake{next(_ids):06d}")


Block = Text | ToolUse


@dataclass(frozen=True)
class Reply:
    """One assistant message. `chunk_delay` spaces the deltas (a slow stream); `hold`, when given, keeps
    the stream open after the content until the test sets it (a turn that is "running" for as long as
    the test needs, with no sleep)."""

    blocks: tuple[Block, ...]
    chunk_delay: float = 0.0
    hold: threading.Event | None = None

    @property
    def stop_reason(self) -> str:
        return "tool_use" if any(isinstance(b, ToolUse) for b in self.blocks) else "end_turn"


@dataclass(frozen=True)
class ApiError:
    """An HTTP error as the API sends it: `{"type":"error","error":{"type":kind,"message":...}}`.
    `retry` False adds `x-should-retry: false`, so the client gives up at once and the turn ends;
    `headers` are sent as well (a usage limit's `anthropic-ratelimit-unified-*`)."""

    status: int
    kind: str
    message: str
    retry_after: int | None = None
    retry: bool = True
    headers: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Deferred:
    """A reply written when its request comes, from the conversation so far (the request's `messages`):
    what a model does when it copies a value a tool returned (a cursor, an id) into its next call."""

    make: Callable[[list[dict[str, Any]]], Reply]


Turn = Reply | ApiError | Deferred


def reply(*blocks: Block | str, chunk_delay: float = 0.0, hold: threading.Event | None = None) -> Reply:
    """A reply; plain strings are text blocks."""
    made = tuple(Text(b) if isinstance(b, str) else b for b in blocks)
    return Reply(made, chunk_delay=chunk_delay, hold=hold)


def bash(command: str, description: str = "") -> ToolUse:
    return ToolUse("Bash", {"command": command, "description": description or command[:60]})


def write(path: str, content: str) -> ToolUse:
    return ToolUse("Write", {"file_path": path, "content": content})


def edit(path: str, old: str, new: str) -> ToolUse:
    return ToolUse("Edit", {"file_path": path, "old_string": old, "new_string": new})


def read(path: str) -> ToolUse:
    return ToolUse("Read", {"file_path": path})


def ask_user_question(question: str, options: list[str], header: str = "Question") -> ToolUse:
    return ToolUse(
        "AskUserQuestion",
        {
            "questions": [
                {
                    "question": question,
                    "header": header[:12],
                    "options": [{"label": o, "description": f"Choose {o}"} for o in options],
                    "multiSelect": False,
                }
            ]
        },
    )


def exit_plan_mode(plan: str) -> ToolUse:
    return ToolUse("ExitPlanMode", {"plan": plan})


def overloaded(*, retry: bool = False) -> ApiError:
    return ApiError(529, "overloaded_error", "Overloaded", retry=retry)


def rate_limited(retry_after: int = 10, *, retry: bool = False) -> ApiError:
    message = "This request would exceed the rate limit for your organization of 50 requests per minute."
    return ApiError(429, "rate_limit_error", message, retry_after=retry_after, retry=retry)


def usage_limited(reset_at: float, claim: str = "five_hour", *, retry: bool = False) -> ApiError:
    """A plan's usage limit as the API answers it: 429 `rate_limit_error` with the unified headers (status
    rejected, the reset as epoch seconds, the window that ran out), `retry-after` up to the reset, and a
    message naming the window and the reset in the "… · resets 3:05pm (UTC)" form Claude Code shows."""
    headers = (
        ("anthropic-ratelimit-unified-status", "rejected"),
        ("anthropic-ratelimit-unified-reset", str(int(reset_at))),
        ("anthropic-ratelimit-unified-representative-claim", claim),
    )
    moment = datetime.fromtimestamp(reset_at, tz=UTC)
    clock = f"{(moment.hour % 12) or 12}:{moment.minute:02d}{'pm' if moment.hour >= 12 else 'am'}"
    window = "5-hour" if claim == "five_hour" else "weekly"
    message = f"{window} limit reached · resets {clock} (UTC)"
    wait = max(1, round(reset_at - time.time()))
    return ApiError(429, "rate_limit_error", message, retry_after=wait, retry=retry, headers=headers)
