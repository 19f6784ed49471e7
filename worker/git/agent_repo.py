"""An agent's own repository: a clone of the person's that borrows its objects read-only (alternates) and
holds the agent's branch and a copy of the person's branches, so nothing an agent runs writes the person's
`.git`. The worker carries branches between repositories with fetches; the person's branches move only
through its merges (worker/merges/)."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from worker.errors import GitError
from worker.git.parse import parse_config_list
from worker.git.repo import Git

MASKED_NAMES = (
    ".gitconfig",
    ".gitmodules",
    ".bashrc",
    ".bash_profile",
    ".zshrc",
    ".zprofile",
    ".profile",
    ".ripgreprc",
    ".mcp.json",
    ".vscode",
    ".idea",
    ".claude",
)
"""What Claude Code's sandbox (2.1.332) covers in the agent's folder, with /dev/null where the project has
no such file or folder (in `.claude/` a dozen names: agents, commands, hooks, settings.json, skills, ...):
no regular files, so `git add -A` would fail on them; the agent repository's info/exclude leaves them out.
A tracked one stays tracked: there the sandbox only makes the real file read-only."""

IDENTITY = r"^(user|author|committer)\.(name|email)$"
"""The person's identity settings, copied so the agent commits as it would in a worktree."""


@dataclass(frozen=True)
class AgentRepo:
    """Where an agent's repository lives: its work tree, its git folder (outside the work tree, so the
    sandbox can keep its config and hooks read-only), and the agent's branch."""

    worktree: Path
    git_dir: Path
    branch: str

    @property
    def git(self) -> Git:
        return Git(self.worktree, git_dir=self.git_dir)

    def exists(self) -> bool:
        return (self.git_dir / "HEAD").is_file()


def create(root: Git, repo: AgentRepo, base: str) -> None:
    """The agent's repository with every branch of the person's, and its work tree on a new branch
    `repo.branch` at the person's `base`. Objects are borrowed, never copied or written back."""
    checked = root.run("check-ref-format", "--branch", repo.branch, check=False)
    if checked.returncode != 0 or repo.branch.startswith("-"):
        raise GitError(
            f"{repo.branch!r} cannot be a branch name", hint="Use letters, digits, '-', '_' and '/'."
        )
    start = root.rev_parse(base)
    common = root.output("rev-parse", "--path-format=absolute", "--git-common-dir").strip()
    repo.worktree.mkdir(parents=True)
    root.run(
        "init",
        "--quiet",
        "--template=",  # no sample hooks: nothing to copy per agent
        f"--separate-git-dir={repo.git_dir}",
        str(repo.worktree),
        what=f"Cannot make the agent's repository {repo.git_dir}",
    )
    for folder in ("hooks", "info"):  # they must exist for the sandbox to keep them read-only
        (repo.git_dir / folder).mkdir(exist_ok=True)
    (repo.git_dir / "objects" / "info" / "alternates").write_text(f"{common}/objects\n", encoding="utf-8")
    own = repo.git
    own.run("symbolic-ref", "HEAD", f"refs/heads/{repo.branch}")
    settings = parse_config_list(root.run("config", "--get-regexp", IDENTITY, check=False).stdout)
    for key, value in settings.items():
        own.run("config", key, value)
    own.run("config", "remote.origin.url", str(root.repo))
    own.run("config", "remote.origin.fetch", "+refs/heads/*:refs/heads/*")
    own.run("config", "--add", "remote.origin.fetch", f"^refs/heads/{repo.branch}")
    own.run("config", "--add", "remote.origin.fetch", "+refs/tags/*:refs/tags/*")
    copied = f"Cannot copy the branches of {root.repo}"
    own.run("fetch", "--quiet", "--no-write-fetch-head", "origin", what=copied)
    own.run("update-ref", f"refs/heads/{repo.branch}", start)
    own.run("reset", "--quiet", "--hard", what=f"Cannot check out {base} in {repo.worktree}")
    with (repo.git_dir / "info" / "exclude").open("a", encoding="utf-8") as f:
        f.write("# covered by Claude Code's sandbox in the agent's folder (worker/git/agent_repo.py)\n")
        f.write("".join(f"/{name}\n" for name in MASKED_NAMES))


def bring(into: Git, source: Path, branch: str) -> None:
    """`branch` as it is in the repository at `source` (a git folder or a checkout), copied over `into`'s
    branch of that name (forced: an agent may rewrite its own history)."""
    into.run(
        "fetch",
        "--quiet",
        "--no-tags",
        "--no-write-fetch-head",
        str(source),
        f"+refs/heads/{branch}:refs/heads/{branch}",
        what=f"Cannot bring {branch} from {source} into {into.git_dir or into.repo}",
        hint=f"Check that {branch} still exists there (git branch --list).",
    )


def publish(root: Git, repo: AgentRepo) -> None:
    """The agent's branch, copied into the person's repository (where `ib diff`, merges and the queue read
    it). Nothing to do for an agent whose repository is gone."""
    if repo.exists():
        bring(root, repo.git_dir, repo.branch)


def remove(repo: AgentRepo) -> None:
    """The work tree and the agent's repository, uncommitted work and all."""
    shutil.rmtree(repo.worktree, ignore_errors=True)
    shutil.rmtree(repo.git_dir, ignore_errors=True)
