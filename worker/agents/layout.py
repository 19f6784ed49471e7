"""Where an agent's things live on disk, and how its tmux session is named.

<root>/.ib/repo-id                      per-repository id, part of every session name
<root>/.ib/agents/<id>/repo             the agent's worktree (branch agent/<id>)
<root>/.ib/agents/<id>/git              its own repository (objects borrowed from the person's)
<root>/.ib/agents/<id>/bin/ib           the one ittybus command on its PATH
<root>/.ib/agents/<id>/cache/npm        npm's cache (the sandbox keeps ~/.npm from it)
<root>/.ib/agents/<id>/relay-queue      a boxed agent's hooks that found no worker (boundary.relay_queue)
<root>/.ib/agents/<id>/{meta.json, prompt.txt, settings.json, start.sh, agent.log}
<root>/.ib/archive/<stamp>-<id>/        what teardown keeps
<root>/.ib/prompts/{all,manager,worker}.md, <root>/.ib/hooks/post-create-agent   the person's own
"""

from __future__ import annotations

import os
import secrets
from dataclasses import dataclass
from pathlib import Path

from bus.settings.repo_paths import STATE_DIR, ensure_state_dir

SESSION_PREFIX = "ib"
RELAY_QUEUE_FOLDER = "relay-queue"


@dataclass(frozen=True)
class AgentPaths:
    root: Path
    agent_id: str

    @property
    def folder(self) -> Path:
        return self.root / STATE_DIR / "agents" / self.agent_id

    @property
    def worktree(self) -> Path:
        return self.folder / "repo"

    @property
    def git_dir(self) -> Path:
        return self.folder / "git"

    @property
    def bin(self) -> Path:
        return self.folder / "bin"

    @property
    def cache(self) -> Path:
        return self.folder / "cache"

    @property
    def relay_queue(self) -> Path:
        return self.folder / RELAY_QUEUE_FOLDER

    @property
    def meta(self) -> Path:
        return self.folder / "meta.json"

    @property
    def prompt(self) -> Path:
        return self.folder / "prompt.txt"

    @property
    def settings(self) -> Path:
        return self.folder / "settings.json"

    @property
    def start_script(self) -> Path:
        return self.folder / "start.sh"

    @property
    def log(self) -> Path:
        return self.folder / "agent.log"


def state_root(root: Path) -> Path:
    return root / STATE_DIR


def archive_root(root: Path) -> Path:
    return root / STATE_DIR / "archive"


def repo_id(root: Path) -> str:
    """The repository's id, made on first use, so two repositories' sessions never collide."""
    path = state_root(root) / "repo-id"
    try:
        return path.read_text().strip()
    except FileNotFoundError:
        pass
    ensure_state_dir(str(root))
    candidate = secrets.token_hex(4)
    try:  # O_EXCL: when two processes race, the first id written wins
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError:
        return path.read_text().strip()
    with os.fdopen(fd, "w") as f:
        f.write(candidate + "\n")
    return candidate


def session_name(root: Path, agent_id: str) -> str:
    return f"{SESSION_PREFIX}-{repo_id(root)}-{agent_id}"
