"""Each agent's `agent.log`: one timestamped line per thing that happened to it (the seed's log_agent)."""

from __future__ import annotations

import time
from pathlib import Path


def log_line(message: str, now: float | None = None) -> str:
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(now))
    return f"[{stamp}] {message.rstrip()}\n"


def append(path: Path, message: str) -> None:
    """Append to an agent's log; a missing folder (agent already torn down) is not an error."""
    try:
        with path.open("a", encoding="utf-8") as f:
            f.write(log_line(message))
    except FileNotFoundError:
        pass
