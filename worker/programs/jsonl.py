"""The JSON lines of an agent program's session log fed in pieces (Codex's rollout, Gemini CLI's chat
log): the objects on the complete lines, and the bytes those lines take. Pure and light (no json)."""

from __future__ import annotations

from bus import fastjson


def entries(data: bytes) -> tuple[list[dict[str, object]], int]:
    """The JSON objects on the complete lines of `data`, and the bytes those lines take (a cut last line
    waits for the next piece; a line that is no JSON object is skipped)."""
    consumed = data.rfind(b"\n") + 1
    found = []
    for raw in data[:consumed].splitlines():
        try:
            entry = fastjson.loads(raw.decode("utf-8", "replace"))
        except (ValueError, SystemError):  # SystemError: see worker.hooks.pre_tool_use
            continue
        if isinstance(entry, dict):
            found.append(entry)
    return found, consumed
