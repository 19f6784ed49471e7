"""What the API said of the quota when a 429 ended a turn, as Claude Code's transcript records it: for a
plan's usage limit 2.1.332 writes `apiError: "usage_limit_reached"` and `quotaLimits` (the unified
headers: status, `resetsAt` epoch seconds, `rateLimitType`) into the error's entry; an ordinary 429 has
neither. Its StopFailure hook payload carries none of it, so the hook reads it here.
"""

from __future__ import annotations

import os

from bus.wire import fastjson
from worker.programs.jsonl import tail

TRANSCRIPT_TAIL = 65536  # bytes read back: the error's entry is among the last few lines
QUOTA_WAIT = 2.0  # seconds: Claude Code may run the hook a moment before the entry is written


def quota_of_entry(entry: dict[str, object]) -> dict[str, object]:
    """The quota an API error entry records: `api_error`, `status`, `resets_at`, `rate_limit_type` (the
    names the hook payload's `rate_limits` would use); {} for an entry that records none."""
    quota = entry.get("quotaLimits")
    limits = quota if isinstance(quota, dict) else {}
    found: dict[str, object] = {
        "api_error": entry.get("apiError"),
        "status": limits.get("status"),
        "resets_at": limits.get("resetsAt"),
        "rate_limit_type": limits.get("rateLimitType"),
    }
    return {name: value for name, value in found.items() if value is not None}


def last_api_error(lines: list[str]) -> dict[str, object] | None:
    """The turn's API error entry: the last assistant entry when it is one; None when the turn's last
    assistant entry is something else (the error not yet written) or there is none."""
    for line in reversed(lines):
        if '"assistant"' not in line:
            continue
        try:
            entry = fastjson.loads(line)
        except (ValueError, SystemError):  # SystemError: see worker.hooks.pre_tool_use
            continue
        if isinstance(entry, dict) and entry.get("type") == "assistant":
            return entry if entry.get("isApiErrorMessage") else None
    return None


def read_quota(path: object) -> dict[str, object]:
    """The quota of the turn's API error from the transcript at `path`, waiting up to QUOTA_WAIT for the
    entry; {} when there is no transcript, no such entry, or it records no quota."""
    import time

    if not isinstance(path, str) or not os.path.isfile(path):
        return {}
    deadline = time.monotonic() + QUOTA_WAIT
    while True:
        entry = last_api_error(tail(path, TRANSCRIPT_TAIL).decode("utf-8", "replace").splitlines())
        if entry is not None or time.monotonic() >= deadline:
            return quota_of_entry(entry) if entry is not None else {}
        time.sleep(0.05)
