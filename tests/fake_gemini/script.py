"""What the scripted Gemini API answers, one turn at a time: model replies made of text parts and
`functionCall` parts (Gemini CLI's run_shell_command / write_file / replace tools), and API errors.
Pure data and builders; `wire` turns them into the bytes the API would send."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Text:
    text: str


@dataclass(frozen=True)
class Call:
    """A whole `functionCall` part: Gemini streams a call in one piece, never in fragments."""

    name: str
    args: dict[str, Any]


Part = Text | Call


@dataclass(frozen=True)
class Reply:
    """One model turn. `chunk_delay` spaces the streamed chunks (a slow model); `chunk_chars` is how much
    text each chunk carries (1: a character at a time); `hold`, when given, keeps the stream open after
    the content until the test sets it (a turn that is "working" for as long as the test needs, with no
    sleep)."""

    parts: tuple[Part, ...]
    chunk_delay: float = 0.0
    hold: threading.Event | None = None
    chunk_chars: int = 24  # enough chunks to look like a real stream


@dataclass(frozen=True)
class ApiError:
    """An HTTP error as the Gemini API sends it: `{"error": {"code", "message", "status"}}`, and its
    `details` when given (google.rpc QuotaFailure, RetryInfo...)."""

    status: int
    code: str  # RESOURCE_EXHAUSTED, UNAVAILABLE, INVALID_ARGUMENT...
    message: str
    details: tuple[dict[str, Any], ...] = ()


@dataclass(frozen=True)
class Deferred:
    """A reply written when its request comes, from the conversation so far (the request's `contents`):
    what a model does when it copies a value a tool returned (a cursor, an id) into its next call."""

    make: Callable[[list[dict[str, Any]]], Reply]


Turn = Reply | ApiError | Deferred


def reply(
    *parts: Part | str, chunk_delay: float = 0.0, hold: threading.Event | None = None, chunk_chars: int = 24
) -> Reply:
    """A reply; plain strings are text parts."""
    made = tuple(Text(p) if isinstance(p, str) else p for p in parts)
    return Reply(made, chunk_delay=chunk_delay, hold=hold, chunk_chars=chunk_chars)


def shell(command: str, description: str = "") -> Call:
    return Call("run_shell_command", {"command": command, "description": description or command[:60]})


def write_file(path: str, content: str) -> Call:
    return Call("write_file", {"file_path": path, "content": content})


def replace(path: str, old: str, new: str, instruction: str = "") -> Call:
    """0.61.0 refuses a replace without `instruction` ("params must have required property")."""
    args = {"file_path": path, "old_string": old, "new_string": new}
    return Call("replace", args | {"instruction": instruction or f"Replace {old!r} with {new!r}."})


def invalid(message: str = "Request contains an invalid argument.") -> ApiError:
    """A 400: Gemini CLI does not retry it, so the turn ends with the error on screen."""
    return ApiError(400, "INVALID_ARGUMENT", message)


def unavailable() -> ApiError:
    """A 503, which Gemini CLI retries with growing delays."""
    return ApiError(503, "UNAVAILABLE", "The model is overloaded. Please try again later.")


def exhausted() -> ApiError:
    return ApiError(429, "RESOURCE_EXHAUSTED", "Resource has been exhausted (e.g. check quota).")


def daily_quota(retry_in: int = 3600) -> ApiError:
    """The free tier's daily quota used up, as the API answers it: 429 RESOURCE_EXHAUSTED with a
    QuotaFailure naming a per-day quota and the RetryInfo. Gemini CLI 0.61.0 asks "Usage limit reached
    for …" with no reset, or ends the turn with the error at once."""
    metric = "generativelanguage.googleapis.com/generate_content_free_tier_requests"
    violation = {"quotaMetric": metric, "quotaId": "GenerateRequestsPerDayPerProjectPerModel-FreeTier"}
    message = (
        "You exceeded your current quota, please check your plan and billing details. "
        f"* Quota exceeded for metric: {metric}, limit: 250\nPlease retry in {retry_in}s."
    )
    details = (
        {"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": [violation]},
        {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": f"{retry_in}s"},
    )
    return ApiError(429, "RESOURCE_EXHAUSTED", message, details)


def quota(retry_in: int = 3600) -> ApiError:
    """A quota used up whose RetryInfo names when it comes back: 429 RESOURCE_EXHAUSTED with a QuotaFailure
    (not per-day) and the RetryInfo. Gemini CLI 0.61.0 retries a delay of up to 300 s itself; past that it
    asks with the reset ("Access resets at 1:58 PM UTC."), or ends the turn with the error at once."""
    metric = "generativelanguage.googleapis.com/generate_content_paid_tier_input_token_count"
    violation = {"quotaMetric": metric, "quotaId": "GenerateContentPaidTierInputTokensPerModel"}
    message = (
        "You exceeded your current quota, please check your plan and billing details. "
        f"* Quota exceeded for metric: {metric}"
    )
    details = (
        {"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": [violation]},
        {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": f"{retry_in}s"},
    )
    return ApiError(429, "RESOURCE_EXHAUSTED", message, details)
