"""The last lines of an agent's transcript (Claude Code's JSONL), read back by the hooks that need what the
payload leaves out: the plan ExitPlanMode proposes, the quota a 429 reported, and the arguments that name
a tool call for the runaway watchdog (worker.hooks.hold). Claude Code 2.1.332 hands the PreToolUse hook
ExitPlanMode as `{}` (the plan stripped), so every plan looked like the same call; the transcript has the
plan, under the call's `tool_use_id`."""

from __future__ import annotations

import os

from bus.wire import fastjson


def tail(path: object, size: int) -> list[str]:
    """The lines of the last `size` bytes of the file at `path` (the first may be cut); [] when it cannot
    be read."""
    if not isinstance(path, str) or not path:
        return []
    try:
        with open(path, "rb") as f:
            f.seek(max(0, os.fstat(f.fileno()).st_size - size))
            return f.read().decode("utf-8", "replace").splitlines()
    except OSError:
        return []


CALL_TAIL = 262144  # bytes read back for a call: it is among the last lines, but a plan may be long
RECORD_WAIT = 1.0  # seconds: Claude Code may run the hook a moment before it writes the call there


def recorded_input(lines: list[str], tool_use_id: str) -> dict[str, object] | None:
    """The input of the tool call `tool_use_id` in these transcript lines (newest first); None when they
    do not hold it."""
    if not tool_use_id:
        return None
    quoted = fastjson.dumps(tool_use_id)
    for line in reversed(lines):
        if quoted not in line:
            continue
        try:
            entry = fastjson.loads(line)
        except (ValueError, SystemError):  # SystemError: see worker.hooks.pre_tool_use
            continue
        message = entry.get("message") if isinstance(entry, dict) else None
        content = message.get("content") if isinstance(message, dict) else None
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and block.get("type") == "tool_use" and block.get("id") == tool_use_id:
                given = block.get("input")
                return given if isinstance(given, dict) else None
    return None


def call_input(stdin_text: str, tool_input: dict[str, object]) -> dict[str, object]:
    """The arguments that name this call: `tool_input`, or, when it is empty, the transcript's record of
    the call (read again for up to RECORD_WAIT seconds); `tool_input` when neither tells more."""
    if tool_input:
        return tool_input
    try:
        payload = fastjson.loads(stdin_text)
    except (ValueError, SystemError):
        return tool_input
    call_id = payload.get("tool_use_id") if isinstance(payload, dict) else None
    path = payload.get("transcript_path") if isinstance(payload, dict) else None
    if not isinstance(call_id, str) or not isinstance(path, str) or not path:
        return tool_input
    import time

    deadline = time.monotonic() + RECORD_WAIT
    while (found := recorded_input(tail(path, CALL_TAIL), call_id)) is None:
        if time.monotonic() >= deadline:
            return tool_input
        time.sleep(0.05)
    return found
