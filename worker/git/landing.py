"""Moving a branch to its merge commit so that a crash at any point leaves the person's checkout as it was or
as merged, never locked or half merged.

The merge commit is made beside the checkout (`merge-tree --write-tree`, `commit-tree`: objects only). The
checkout is touched by one atomic step, the branch's move (`update-ref` guarded by the old tip), and then by
bringing the files the merge changed (only those) to the new tip. A journal in the checkout's git folder,
written before the move and removed after the files, lets the next worker finish (the branch moved: its
files are brought) or undo (it did not: nothing changed) what a crash cut short, and say which.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Protocol

from worker.errors import GitError
from worker.git import stale_locks
from worker.git.parse import TreeChange, parse_tree_changes

log = logging.getLogger(__name__)

JOURNAL = "ittybus-merge.json"
"""In the checkout's own git folder (`git rev-parse --git-path`): one merge at a time moves a checkout."""

LITERAL = {"GIT_LITERAL_PATHSPECS": "1"}


class Git(Protocol):
    """What this module needs of worker.git.repo.Git (which calls it: a protocol, not an import cycle)."""

    def run(
        self,
        *args: str,
        cwd: Path | None = None,
        check: bool = True,
        env: Mapping[str, str] | None = None,
        what: str = "",
        hint: str = "",
        input: str | None = None,
    ) -> subprocess.CompletedProcess[str]: ...

    def output(
        self, *args: str, cwd: Path | None = None, what: str = "", hint: str = "", input: str | None = None
    ) -> str: ...

    def current_branch(self, path: Path | None = None) -> str | None: ...


@dataclass(frozen=True)
class Journal:
    """A merge moving `target` (checked out in `checkout`) from `old` to `new`."""

    target: str
    branch: str
    old: str
    new: str
    checkout: str

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> Journal:
        return cls(**{k: str(v) for k, v in json.loads(text).items()})


@dataclass(frozen=True)
class Recovery:
    """What the next worker did about a merge a crash cut short: `finished`, `undone` or `left`."""

    journal: Journal
    outcome: str
    detail: str = ""

    @property
    def line(self) -> str:
        j = self.journal
        said = {
            "finished": f"finished: {j.target} is at the merge {j.new[:7]} and the checkout's files with it",
            "undone": f"undone: {j.target} had not moved ({j.old[:7]}); nothing had changed",
            "left": "left as it is",
        }[self.outcome]
        extra = f" ({self.detail})" if self.detail else ""
        where = f"{j.branch} into {j.target} in {j.checkout}"
        return f"the merge of {where} that a crash cut short was {said}{extra}"


def git_path(git: Git, checkout: Path, name: str) -> Path:
    return Path(git.output("rev-parse", "--path-format=absolute", "--git-path", name, cwd=checkout).strip())


def move(git: Git, journal: Journal) -> list[str]:
    """Move `journal.target` from `old` to `new` and bring the checkout's changed files along; the paths left
    as they were because they were edited meanwhile (normally none)."""
    checkout = Path(journal.checkout)
    path = git_path(git, checkout, JOURNAL)
    _write(path, journal.to_json())
    try:
        _move_ref(git, journal)
    except GitError:
        if _tip(git, journal.target) != journal.new:  # the branch did not move: nothing changed
            path.unlink(missing_ok=True)
        raise
    left = bring(git, checkout, journal.old, journal.new)
    path.unlink(missing_ok=True)
    return left


def move_unchecked_out(git: Git, target: str, old: str, new: str, branch: str) -> None:
    """A branch checked out nowhere: its move is the whole merge, and atomic."""
    _move_ref(git, Journal(target, branch, old, new, ""))


def _move_ref(git: Git, journal: Journal) -> None:
    git.run(
        "update-ref",
        "-m",
        f"ittybus: merge {journal.branch} into {journal.target}",
        f"refs/heads/{journal.target}",
        journal.new,
        journal.old,
        what=f"{journal.target} moved while {journal.branch} was being merged into it",
        hint="Nothing was changed; merge again.",
    )


def bring(git: Git, checkout: Path, old: str, new: str) -> list[str]:
    """Bring the index entries and files of `checkout` that differ between `old` and `new` to `new`; the
    person's other changes stay. A path whose file is neither `old`'s nor `new`'s (edited meanwhile) is left
    and returned. Idempotent: a crash half way through is finished by running it again."""
    changes = parse_tree_changes(git.output("diff-tree", "-r", "-z", "--no-renames", "--no-abbrev", old, new))
    current = _file_blobs(git, checkout, [c for c in changes if c.plain])
    ready = [c for c in changes if not c.plain or current[c.path] in (c.old_blob, c.new_blob)]
    left = sorted(c.path for c in changes if c not in ready)
    kept = [c.path for c in ready if c.new_blob is not None]
    gone = [c.path for c in ready if c.new_blob is None]
    if kept:
        git.run(
            "restore",
            f"--source={new}",
            "--staged",
            "--worktree",
            "--pathspec-from-file=-",
            "--pathspec-file-nul",
            cwd=checkout,
            env=LITERAL,
            input="\0".join(kept),
            what=f"Cannot bring the merged files into {checkout}",
        )
    if gone:
        git.run(
            "rm",
            "-q",
            "--cached",
            "--ignore-unmatch",
            "--pathspec-from-file=-",
            "--pathspec-file-nul",
            cwd=checkout,
            env=LITERAL,
            input="\0".join(gone),
            what=f"Cannot take the files the merge deleted out of {checkout}",
        )
        for name in gone:
            (checkout / name).unlink(missing_ok=True)
    if left:
        log.warning("merge into %s: left %s as they are: edited since the merge began", checkout, left)
    return left


def _file_blobs(git: Git, checkout: Path, changes: list[TreeChange]) -> dict[str, str | None]:
    """The blob each changed path's file would be (git's filters applied), None where there is none."""
    blobs: dict[str, str | None] = {c.path: None for c in changes}
    present = [
        c.path
        for c in changes
        if "\n" not in c.path and (checkout / c.path).is_file() and not (checkout / c.path).is_symlink()
    ]
    if present:
        out = git.output("hash-object", "--stdin-paths", cwd=checkout, input="\n".join(present) + "\n")
        blobs.update(zip(present, out.split(), strict=True))
    for c in changes:
        if blobs[c.path] is None and (checkout / c.path).exists():
            blobs[c.path] = "?"  # something git cannot hash as a file: never a side of the merge
    return blobs


def recover(git: Git, checkout: Path) -> Recovery | None:
    """Finish or undo the merge a crash cut short in `checkout`, if there was one; clears the lock files its
    killed git left (never one of a git that still runs: then GitError, and it waits for the next try)."""
    path = git_path(git, checkout, JOURNAL)
    try:
        journal = Journal.from_json(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError, TypeError) as e:  # written whole by a rename: not ours, or damaged by hand
        log.warning("dropped the unreadable merge journal %s (%s)", path, e)
        path.unlink(missing_ok=True)
        return None
    _clear_locks(git, checkout, journal, path)
    tip = _tip(git, journal.target)
    if tip == journal.old:
        recovery = Recovery(journal, "undone")
    elif tip == journal.new and git.current_branch(checkout) == journal.target:
        left = bring(git, checkout, journal.old, journal.new)
        edited = f"edited since, left as they are: {', '.join(left)}" if left else ""
        recovery = Recovery(journal, "finished", edited)
    else:
        now = "is gone" if tip is None else f"is at {tip[:7]}"
        recovery = Recovery(journal, "left", f"{journal.target} {now} or is no longer checked out there")
    path.unlink(missing_ok=True)
    log.warning("%s", recovery.line)
    return recovery


def _clear_locks(git: Git, checkout: Path, journal: Journal, path: Path) -> None:
    locks = [git_path(git, checkout, name) for name in ("index.lock", "HEAD.lock")]
    locks.append(git_path(git, checkout, f"refs/heads/{journal.target}.lock"))
    folders = [checkout, git_path(git, checkout, "."), git_path(git, checkout, "refs")]
    _removed, running = stale_locks.clear(locks, path.stat().st_mtime, folders, [checkout / ".ib"])
    if running:
        pids = ", ".join(str(g.pid) for g in running)
        raise GitError(
            f"A git process ({pids}) works in {checkout}: the merge a crash cut short there waits for it",
            hint="Nothing was changed; the worker tries again at the next merge.",
        )


def _tip(git: Git, branch: str) -> str | None:
    found = git.run("rev-parse", "--verify", "--quiet", f"refs/heads/{branch}^{{commit}}", check=False)
    return found.stdout.strip() or None


def _write(path: Path, text: str) -> None:
    """All or nothing: a temporary file renamed over the journal, its bytes on disk first."""
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
