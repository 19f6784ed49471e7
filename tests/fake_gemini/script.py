"""What the scripted Gemini API answers, one turn at a time: model replies made of text parts and
`functionCall` parts (Gemini CLI's run_shell_command / write_file / replace tools), and API errors.
Pure data and builders; `wire` turns them into the bytes the API would send."""

from __future__ import annotations

import threading
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
    """One model turn. `chunk_delay` spaces the streamed chunks (a slow model); `hold`, when given, keeps
    the stream open after the content until the test sets it (a turn that is "working" for as long as
    the test needs, with no sleep)."""

    parts: tuple[Part, ...]
    chunk_delay: float = 0.0
    hold: threading.Event | None = None


@dataclass(frozen=True)
class ApiError:
    """An HTTP error as the Gemini API sends it: `{"error": {"code", "message", "status"}}`."""

    status: int
    code: str  # RESOURCE_EXHAUSTED, UNAVAILABLE, INVALID_ARGUMENT...
    message: str


Turn = Reply | ApiError


def reply(*parts: Part | str, chunk_delay: float = 0.0, hold: threading.Event | None = None) -> Reply:
    """A reply; plain strings are text parts."""
    made = tuple(Text(p) if isinstance(p, str) else p for p in parts)
    return Reply(made, chunk_delay=chunk_delay, hold=hold)


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
