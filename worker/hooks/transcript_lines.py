"""The last lines of an agent's transcript (Claude Code's JSONL), read back by the hooks that need what the
payload leaves out: the plan ExitPlanMode proposes, the quota a 429 reported."""

from __future__ import annotations

import os


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
