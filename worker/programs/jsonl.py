"""The JSON lines of an agent program's session log fed in pieces (Codex's rollout, Gemini CLI's chat
log): the objects on the complete lines, and the bytes those lines take. Pure and light (no json)."""

from __future__ import annotations

from bus.wire import fastjson


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


def last_entries(path: str, size: int) -> list[dict[str, object]]:
    """The JSON objects on the whole lines of the last `size` bytes of the log at `path` (the line cut at
    the start left out); [] when there is no path or it cannot be read."""
    data = tail(path, size)
    return entries(data if data.endswith(b"\n") else data + b"\n")[0]


def tail(path: str, size: int) -> bytes:
    """The last `size` bytes of the log at `path` from its first whole line; b"" when there is no path or
    it cannot be read."""
    if not path:
        return b""
    try:
        with open(path, "rb") as log:
            end = log.seek(0, 2)
            log.seek(max(0, end - size))
            data = log.read()
    except OSError:
        return b""
    return data[data.find(b"\n") + 1 :] if end > size else data
