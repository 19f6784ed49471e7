"""git for the conflict check: a snapshot commit of an agent's work (committed and not) and in-memory merges
of snapshots, all written into one scratch repository (`R/.ib/conflicts.git`) that borrows every agent's
objects.

A snapshot copies the agent's index to a temporary file, runs `git add -A` and `git write-tree` on the copy
with the scratch store as the object directory, and wraps the tree in a commit whose parent is the agent's
HEAD: the agent's index, checkout, refs and object store are never written. Merges are one
`git merge-tree --write-tree -z --stdin` run for all pairs.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from worker.conflicts.merge_tree import ENCODING, ERRORS, MergeOutcome, parse_batch
from worker.errors import GitError

GIT_TIMEOUT = 30.0
PRUNE_EXPIRE = "2.hours.ago"
BLOB_LIMIT = 1 << 20  # bytes of a conflicted file read for its hunks
IDENTITY = {
    "GIT_AUTHOR_NAME": "ittybus",
    "GIT_AUTHOR_EMAIL": "ittybus@localhost",
    "GIT_AUTHOR_DATE": "1700000000 +0000",  # fixed: the same work gives the same snapshot commit
    "GIT_COMMITTER_NAME": "ittybus",
    "GIT_COMMITTER_EMAIL": "ittybus@localhost",
    "GIT_COMMITTER_DATE": "1700000000 +0000",
}
_BUSY = ("rebase-merge", "rebase-apply", "MERGE_HEAD", "CHERRY_PICK_HEAD")
"""In an agent's git folder: a rebase or merge under way, its checkout holds markers or half a history."""


class Busy(GitError):
    """The agent's repository is in the middle of a rebase or merge (or moved during the snapshot)."""


@dataclass(frozen=True)
class Snapshot:
    """An agent's work at one moment: `commit` (tree: the work tree as `git add -A` sees it; parent: HEAD)."""

    agent: str
    commit: str
    head: str
    tree: str


def _env(**extra: str) -> dict[str, str]:
    """The process environment without git variables that would point git elsewhere, plus `extra`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(IDENTITY)
    env.update(extra)
    return env


def _git(args: Sequence[str], *, env: dict[str, str], cwd: Path | None = None, stdin: bytes = b"") -> bytes:
    try:
        done = subprocess.run(
            ["git", *args],
            input=stdin,
            capture_output=True,
            env=env,
            cwd=cwd,
            timeout=GIT_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as e:
        raise GitError(f"git {args[0]} failed: {e}") from e
    if done.returncode not in (0, 1) or (done.returncode == 1 and args[0] != "merge-tree"):
        error = done.stderr.decode(ENCODING, "replace").strip().splitlines()
        raise GitError(f"git {' '.join(args[:2])} failed: {error[-1] if error else done.returncode}")
    return done.stdout


class Scratch:
    """The scratch repository under the person's repository: bare, its own objects, every agent's borrowed."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.git_dir = root / ".ib" / "conflicts.git"
        self._common: Path | None = None  # the person's git folder (its objects are borrowed)

    @property
    def objects(self) -> Path:
        return self.git_dir / "objects"

    def ensure(self) -> None:
        if (self.git_dir / "HEAD").is_file():
            return
        self.git_dir.parent.mkdir(parents=True, exist_ok=True)
        _git(["init", "--quiet", "--bare", "--template=", str(self.git_dir)], env=_env())

    def borrow(self, object_dirs: Sequence[Path]) -> None:
        """The object stores the merges read: the person's and the given agents' (rewritten on a change)."""
        if self._common is None:
            found = _git(
                ["rev-parse", "--path-format=absolute", "--git-common-dir"], env=_env(), cwd=self.root
            )
            self._common = Path(found.decode(ENCODING, ERRORS).strip())
        wanted = "".join(f"{d}\n" for d in [self._common / "objects", *object_dirs])
        alternates = self.objects / "info" / "alternates"
        if alternates.is_file() and alternates.read_text(encoding=ENCODING, errors=ERRORS) == wanted:
            return
        alternates.parent.mkdir(parents=True, exist_ok=True)
        temporary = alternates.with_suffix(".new")
        temporary.write_text(wanted, encoding=ENCODING, errors=ERRORS)
        temporary.replace(alternates)

    def snapshot(self, agent: str, worktree: Path, git_dir: Path) -> Snapshot:
        """The agent's work now. Raises Busy during a rebase or merge, GitError when git fails."""
        if any((git_dir / name).exists() for name in _BUSY):
            raise Busy(f"{agent}'s repository is in the middle of a rebase or merge")
        head = self._head(git_dir)
        with tempfile.TemporaryDirectory(prefix="index-", dir=self.git_dir) as folder:
            index = Path(folder) / "index"
            if (git_dir / "index").is_file():
                # with its mtime: git trusts a file's stat only when it is older than the index (racy git);
                # a copy dated now would hide a same-size rewrite made in the index's second
                shutil.copy2(git_dir / "index", index)
            env = _env(
                GIT_DIR=str(git_dir),
                GIT_WORK_TREE=str(worktree),
                GIT_INDEX_FILE=str(index),
                GIT_OBJECT_DIRECTORY=str(self.objects),
                GIT_ALTERNATE_OBJECT_DIRECTORIES=str(git_dir / "objects"),
            )
            _git(["add", "--all", "--", "."], env=env, cwd=worktree)
            tree = _git(["write-tree"], env=env, cwd=worktree).decode().strip()
            if self._head(git_dir) != head:
                raise Busy(f"{agent}'s branch moved during the check")
            commit = _git(["commit-tree", tree, "-p", head, "-m", f"ittybus snapshot of {agent}"], env=env)
        return Snapshot(agent, commit.decode().strip(), head, tree)

    def _head(self, git_dir: Path) -> str:
        return (
            _git(["rev-parse", "--verify", "HEAD^{commit}"], env=_env(GIT_DIR=str(git_dir))).decode().strip()
        )

    def merge(self, pairs: Sequence[tuple[str, str]]) -> list[MergeOutcome]:
        """Each pair of commits merged in memory, in order (one git process for all)."""
        if not pairs:
            return []
        lines = "".join(f"{ours} {theirs}\n" for ours, theirs in pairs).encode()
        out = _git(
            ["merge-tree", "--write-tree", "-z", "--stdin"], env=_env(GIT_DIR=str(self.git_dir)), stdin=lines
        )
        outcomes = parse_batch(out)
        if len(outcomes) != len(pairs):
            raise GitError(f"git merge-tree answered {len(outcomes)} of {len(pairs)} merges")
        return outcomes

    def text(self, tree: str, path: str) -> str | None:
        """A file of a merged tree as text (None when it is too big to read for hunks)."""
        env = _env(GIT_DIR=str(self.git_dir))
        spec = f"{tree}:{path}"
        size = int(_git(["cat-file", "-s", spec], env=env).decode().strip() or "0")
        if size > BLOB_LIMIT:
            return None
        return _git(["cat-file", "blob", spec], env=env).decode(ENCODING, "replace")

    def prune(self, expire: str = PRUNE_EXPIRE) -> None:
        """Drop the scratch objects no snapshot used lately (git freshens an object each time it is written
        again, so the snapshots in use stay)."""
        if (self.git_dir / "HEAD").is_file():
            _git(["prune", f"--expire={expire}"], env=_env(GIT_DIR=str(self.git_dir)))

    def branch_tip(self, branch: str) -> str | None:
        """The commit of the person's `branch`, None when there is no such branch."""
        done = subprocess.run(
            ["git", "rev-parse", "--verify", "--quiet", f"refs/heads/{branch}^{{commit}}"],
            capture_output=True,
            env=_env(),
            cwd=self.root,
            timeout=GIT_TIMEOUT,
            check=False,
        )
        return done.stdout.decode().strip() or None if done.returncode == 0 else None
