"""What the scripted Responses API answers, one turn at a time: assistant messages, `exec_command` function
calls (one may ask to run outside the sandbox, which draws Codex's approval dialog), `apply_patch` custom
tool calls, and HTTP errors. Pure data and builders; `sse` turns them into the bytes the API would send."""

from __future__ import annotations

import dataclasses
import itertools
import json
import threading
import time
from dataclasses import dataclass, field

_ids = itertools.count(1)


def _call_id() -> str:
    return f"call_fake{next(_ids):06d}"


@dataclass(frozen=True)
class Text:
    text: str


@dataclass(frozen=True)
class FunctionCall:
    """A function tool call (`exec_command` is Codex's shell); `arguments` is the JSON text it gets."""

    name: str
    arguments: str
    call_id: str = field(default_factory=_call_id)


@dataclass(frozen=True)
class CustomToolCall:
    """A free-form tool call (`apply_patch` takes the patch as its raw input)."""

    name: str
    input: str
    call_id: str = field(default_factory=_call_id)


Item = Text | FunctionCall | CustomToolCall


@dataclass(frozen=True)
class Reply:
    """One response. `chunk_delay` spaces the text deltas (a slow stream); `hold`, when given, keeps the
    stream open after the output items until the test sets it (a turn that runs as long as it needs)."""

    items: tuple[Item, ...]
    chunk_delay: float = 0.0
    hold: threading.Event | None = None
    headers: tuple[tuple[str, str], ...] = ()  # sent with the stream (the rate-limit windows' use)

    @property
    def calls_tools(self) -> bool:
        return any(not isinstance(item, Text) for item in self.items)


@dataclass(frozen=True)
class ApiError:
    """An HTTP error as the API sends it: `{"error": {"type": kind, "message": ..., "code": ...}}`, with
    `fields` added to the error object and `headers` sent as well (a plan's usage limit carries both)."""

    status: int
    kind: str
    message: str
    code: str | None = None
    retry_after: int | None = None
    fields: tuple[tuple[str, object], ...] = ()
    headers: tuple[tuple[str, str], ...] = ()


Turn = Reply | ApiError


def reply(*items: Item | str, chunk_delay: float = 0.0, hold: threading.Event | None = None) -> Reply:
    """A response; plain strings are assistant messages."""
    made = tuple(Text(i) if isinstance(i, str) else i for i in items)
    return Reply(made, chunk_delay=chunk_delay, hold=hold)


def exec_command(cmd: str, *, escalate: str = "", workdir: str = "") -> FunctionCall:
    """Codex's shell tool. With `escalate` (the justification) the call asks to run outside the sandbox,
    which Codex puts to the person in its approval dialog under `approval_policy = "on-request"`."""
    arguments: dict[str, object] = {"cmd": cmd}
    if workdir:
        arguments["workdir"] = workdir
    if escalate:
        arguments |= {"sandbox_permissions": "require_escalated", "justification": escalate}
    return FunctionCall("exec_command", json.dumps(arguments))


def apply_patch(patch: str) -> CustomToolCall:
    """An edit as Codex makes them: a `*** Begin Patch` ... `*** End Patch` text."""
    return CustomToolCall("apply_patch", patch)


def add_file(path: str, content: str) -> CustomToolCall:
    """apply_patch adding one file (`path` relative to the working directory, or absolute)."""
    lines = "".join(f"+{line}\n" for line in content.splitlines())
    return apply_patch(f"*** Begin Patch\n*** Add File: {path}\n{lines}*** End Patch")


def server_error() -> ApiError:
    return ApiError(500, "server_error", "The server had an error while processing your request.")


def rate_limited(retry_after: int = 1) -> ApiError:
    message = "Rate limit reached for requests per min. Please try again shortly."
    return ApiError(429, "requests", message, code="rate_limit_exceeded", retry_after=retry_after)


def near_usage_limits(turn: Reply, used_percent: int = 95, resets_in: int = 3000) -> Reply:
    """`turn` with the rate-limit headers of a plan near both its limits (5-hour and weekly): Codex CLI
    0.169.0 then warns, and offers to switch to a cheaper model in a menu that stops the session."""
    weekly = (
        ("x-codex-secondary-used-percent", str(used_percent)),
        ("x-codex-secondary-window-minutes", "10080"),
    )
    five_hours = _five_hour_window(used_percent, resets_in, int(time.time() + resets_in))
    return dataclasses.replace(turn, headers=five_hours + weekly)


def _five_hour_window(used_percent: int, resets_in: int, at: int) -> tuple[tuple[str, str], ...]:
    """The `x-codex-primary-*` headers: how much of the 5-hour window is used, and its reset both ways."""
    return (
        ("x-codex-primary-used-percent", str(used_percent)),
        ("x-codex-primary-window-minutes", "300"),
        ("x-codex-primary-reset-after-seconds", str(resets_in)),
        ("x-codex-primary-reset-at", str(at)),
    )


def usage_limit_reached(resets_in: int, plan: str = "plus", *, now: float | None = None) -> ApiError:
    """A plan's usage limit as the ChatGPT backend answers Codex: 429 `usage_limit_reached` with the plan
    and the reset in the error (`resets_at`, epoch seconds, and `resets_in_seconds`), and the
    `x-codex-primary-*` headers of the 5-hour window used up (the reset both ways too). Codex CLI 0.169.0
    reads `resets_at` and `x-codex-primary-reset-at` only; the reset is `now` (default: the time of the
    call) + `resets_in`, in whole seconds."""
    at = int((time.time() if now is None else now) + resets_in)
    headers = _five_hour_window(100, resets_in, at)
    message = "The usage limit has been reached"
    fields = (("plan_type", plan), ("resets_at", at), ("resets_in_seconds", resets_in))
    return ApiError(429, "usage_limit_reached", message, fields=fields, headers=headers)
