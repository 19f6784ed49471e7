"""Where things are on disk: the repository an `ib` process belongs to and the agent it runs as.

Pure path logic plus `os.path` checks, no subprocess: hooks call this on every tool call.
Agent worktrees live at `<root>/.ib/agents/<id>/repo`; the root repository is the nearest
ancestor whose `.git` is a folder (a worktree's `.git` is a file).
"""

from __future__ import annotations

import os

STATE_DIR = ".ib"
_AGENTS = f"/{STATE_DIR}/agents/"


def _agent_match(path: str) -> tuple[int, str] | None:
    """(where `/.ib/agents/` starts, the agent id) when `path` lies in an agent's worktree."""
    start = path.find(_AGENTS)
    while start >= 0:
        rest = path[start + len(_AGENTS) :]
        agent, _, tail = rest.partition("/")
        if agent and (tail == "repo" or tail.startswith("repo/")):
            return start, agent
        start = path.find(_AGENTS, start + 1)
    return None


def repo_root(start: str) -> str | None:
    """The main repository containing `start` (seen through agent worktrees), or None."""
    path = os.path.abspath(start)
    match = _agent_match(path)
    if match:
        return path[: match[0]] or "/"
    while True:
        if os.path.isdir(os.path.join(path, ".git")):
            return path
        parent = os.path.dirname(path)
        if parent == path:
            return None
        path = parent


def agent_from_path(start: str) -> str | None:
    """The agent id when `start` lies inside an agent's worktree."""
    match = _agent_match(os.path.abspath(start))
    return match[1] if match else None


def state_dir(root: str) -> str:
    return os.path.join(root, STATE_DIR)


def ensure_state_dir(root: str) -> str:
    """`<root>/.ib`, created private (0700) and tightened to 0700 when an older version left it open
    (the bus's password, agents' settings and logs live below it), and kept out of `git status` (in
    `.git/info/exclude`, not the person's .gitignore) by whichever command creates it first."""
    path = state_dir(root)
    os.makedirs(path, mode=0o700, exist_ok=True)
    if os.stat(path).st_mode & 0o077:
        os.chmod(path, 0o700)
    _exclude_from_git(root)
    return path


def _exclude_from_git(root: str) -> None:
    git_dir = os.path.join(root, ".git")
    if not os.path.isdir(git_dir):  # not the main checkout of a repository: nothing to exclude from
        return
    exclude = os.path.join(git_dir, "info", "exclude")
    try:
        with open(exclude, encoding="utf-8") as f:
            current = f.read()
    except FileNotFoundError:
        current = ""
    if f"/{STATE_DIR}/" not in current.split():
        os.makedirs(os.path.dirname(exclude), exist_ok=True)
        with open(exclude, "a", encoding="utf-8") as f:
            f.write(("\n" if current and not current.endswith("\n") else "") + f"/{STATE_DIR}/\n")
