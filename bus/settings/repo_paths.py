"""Where things are on disk: the repository an `ib` process belongs to and the agent it runs as.

Pure path logic plus `os.path` checks, no subprocess: hooks call this on every tool call.
Agent worktrees live at `<root>/.ib/agents/<id>/repo` and belong to the repository above `.ib`.
Anywhere else the root is the nearest ancestor with a `.git`: a folder in a main checkout, a file
(`gitdir: ...`) in a linked worktree or a submodule, which then is a root of its own.
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
        if git_dir(path) is not None:
            return path
        parent = os.path.dirname(path)
        if parent == path:
            return None
        path = parent


def agent_from_path(start: str) -> str | None:
    """The agent id when `start` lies inside an agent's worktree."""
    match = _agent_match(os.path.abspath(start))
    return match[1] if match else None


# kept out of `git status` and `git add -A`: ittybus's state, and the `.env` that holds the bot's token
EXCLUDED = (f"/{STATE_DIR}/", "/.env")


def state_dir(root: str) -> str:
    return os.path.join(root, STATE_DIR)


def ensure_state_dir(root: str) -> str:
    """`<root>/.ib`, created private (0700) and tightened to 0700 when an older version left it open
    (the bus's password, agents' settings and logs live below it), and kept out of `git status` (in
    `.git/info/exclude`, not the person's .gitignore) by whichever command creates it first; so is
    `/.env`, where the Telegram token goes (a `.env` git already tracks stays tracked: the bot refuses it)."""
    path = state_dir(root)
    os.makedirs(path, mode=0o700, exist_ok=True)
    if os.stat(path).st_mode & 0o077:
        os.chmod(path, 0o700)
    exclude_from_git(root, EXCLUDED)
    return path


def git_dir(top: str) -> str | None:
    """The git folder of the checkout at `top`: `top/.git`, or where the `gitdir:` line of a linked
    worktree's or submodule's `.git` file points; None when `top` is no checkout's top."""
    dot_git = os.path.join(top, ".git")
    if os.path.isdir(dot_git):
        return dot_git
    try:
        with open(dot_git, encoding="utf-8") as f:
            first = f.readline().strip()
    except (OSError, UnicodeDecodeError):
        return None
    if not first.startswith("gitdir:"):
        return None
    target = os.path.join(top, first[len("gitdir:") :].strip())
    return os.path.normpath(target) if os.path.isdir(target) else None


def common_git_dir(own: str) -> str:
    """The folder a linked worktree's git folder `own` shares with its main checkout (`commondir`);
    `own` itself for a main checkout or a submodule."""
    try:
        with open(os.path.join(own, "commondir"), encoding="utf-8") as f:
            common = f.readline().strip()
    except (OSError, UnicodeDecodeError):
        return own
    return os.path.normpath(os.path.join(own, common)) if common else own


def shared_git_dir(top: str) -> str:
    """The common git folder of the checkout at `top` (branches, config, hooks, info/exclude)."""
    return common_git_dir(git_dir(top) or os.path.join(top, ".git"))


def main_checkout(top: str) -> str:
    """The main checkout of the repository whose checkout is at `top`: `top` itself, or for a linked
    worktree the folder its shared git folder belongs to (the folder Claude Code asks to trust)."""
    shared = shared_git_dir(top)
    return os.path.dirname(shared) if os.path.basename(shared) == ".git" else top


def exclude_from_git(root: str, lines: tuple[str, ...]) -> None:
    """`lines` (patterns) in the repository's `.git/info/exclude`, each once: out of `git status` without
    touching the person's .gitignore."""
    if git_dir(root) is None:  # not the top of a checkout (IB_ROOT set elsewhere): nothing to exclude from
        return
    exclude = os.path.join(shared_git_dir(root), "info", "exclude")
    try:
        with open(exclude, encoding="utf-8") as f:
            current = f.read()
    except FileNotFoundError:
        current = ""
    missing = [line for line in lines if line not in current.split()]
    if missing:
        os.makedirs(os.path.dirname(exclude), exist_ok=True)
        with open(exclude, "a", encoding="utf-8") as f:
            f.write(
                ("\n" if current and not current.endswith("\n") else "") + "".join(m + "\n" for m in missing)
            )
