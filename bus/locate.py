"""Where things are on disk: the repository an `ib` process belongs to and the agent it runs as.

Pure path logic plus `os.path` checks, no subprocess: hooks call this on every tool call.
Agent worktrees live at `<root>/.ib/agents/<id>/repo`; the root repository is the nearest
ancestor whose `.git` is a folder (a worktree's `.git` is a file).
"""

from __future__ import annotations

import os
import re

STATE_DIR = ".ib"
_AGENT_PATH = re.compile(r"/\.ib/agents/([^/]+)/repo(?:/|$)")


def repo_root(start: str) -> str | None:
    """The main repository containing `start` (seen through agent worktrees), or None."""
    path = os.path.abspath(start)
    match = _AGENT_PATH.search(path + "/")
    if match:
        return path[: match.start()] or "/"
    while True:
        if os.path.isdir(os.path.join(path, ".git")):
            return path
        parent = os.path.dirname(path)
        if parent == path:
            return None
        path = parent


def agent_from_path(start: str) -> str | None:
    """The agent id when `start` lies inside an agent's worktree."""
    match = _AGENT_PATH.search(os.path.abspath(start) + "/")
    return match.group(1) if match else None


def state_dir(root: str) -> str:
    return os.path.join(root, STATE_DIR)
