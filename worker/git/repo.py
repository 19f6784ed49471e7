"""The git binary behind a small API: agents' worktrees and branches, what a branch changed, rebasing an
agent's worktree, and merging a branch into its target without ever touching the person's uncommitted work.
A thin shell over subprocess; reading git's output is worker/git/parse.py's job."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from worker.errors import GitError
from worker.git import landing
from worker.git.parse import (
    LOG_FORMAT,
    ChangeSize,
    Commit,
    StatusEntry,
    WorktreeInfo,
    changes,
    conflicted,
    identity_env,
    parse_config_list,
    parse_log,
    parse_names,
    parse_numstat,
    parse_status,
    parse_worktrees,
)

ALWAYS = (
    *("-c", "core.editor=true"),
    *("-c", "color.ui=false"),
    *("-c", "core.quotePath=false"),
    *("-c", "log.showSignature=false"),
)
"""Overrides on every command: never an editor, never colour codes, paths printed as they are."""

STEPS = (
    *("-c", "rebase.autoStash=false"),
    *("-c", "merge.autoStash=false"),
    *("-c", "rebase.autoSquash=false"),
    *("-c", "rebase.updateRefs=false"),
    *("-c", "rerere.enabled=false"),
)
"""Overrides on rebase and merge, so the person's config cannot stash, reorder or resolve behind our back
(keys an older git does not know are ignored)."""

LOCAL_VARIABLES = frozenset(
    {
        "GIT_DIR",
        "GIT_WORK_TREE",
        "GIT_INDEX_FILE",
        "GIT_OBJECT_DIRECTORY",
        "GIT_ALTERNATE_OBJECT_DIRECTORIES",
        "GIT_COMMON_DIR",
        "GIT_IMPLICIT_WORK_TREE",
        "GIT_GRAFT_FILE",
        "GIT_NO_REPLACE_OBJECTS",
        "GIT_REPLACE_REF_BASE",
        "GIT_PREFIX",
        "GIT_SHALLOW_FILE",
        "GIT_CONFIG",
        "GIT_CONFIG_PARAMETERS",
        "GIT_CONFIG_COUNT",
    }
)
"""Variables that would point git at another repository (set when we run inside a git hook): dropped, since
every command names its folder."""

QUIET_ENV = {
    "GIT_TERMINAL_PROMPT": "0",
    "LC_ALL": "C",
    "GIT_EDITOR": "true",
    "GIT_SEQUENCE_EDITOR": "true",
    "GIT_MERGE_AUTOEDIT": "no",
    "GIT_PAGER": "cat",
    "GIT_OPTIONAL_LOCKS": "0",  # `git status` never takes the index's lock: a kill cannot leave one behind
}


@dataclass(frozen=True)
class RebaseResult:
    ok: bool
    head: str
    """HEAD of the worktree afterwards: the rebased tip, or the untouched old one after a conflict."""
    conflicts: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class MergeResult:
    ok: bool
    sha: str | None
    """The merge commit (the target's tip when there was nothing to merge); None after a conflict."""
    commits: list[Commit] = field(default_factory=list)
    """What the branch brought in (newest first); empty when it was already merged."""
    conflicts: list[str] = field(default_factory=list)


class Git:
    """One repository: the main working tree, or a linked worktree for the per-worktree operations; with
    `git_dir`, an agent's own repository (worker/git/agent_repo.py) whose work tree is `repo`, named
    explicitly on every command so that nothing in the work tree (its `.git` file) chooses the repository."""

    def __init__(self, repo: Path, *, timeout: float = 300.0, git_dir: Path | None = None) -> None:
        self.repo = Path(repo)
        self.timeout = timeout
        self.git_dir = git_dir

    # -- running git ---------------------------------------------------------------------------------------

    def run(
        self,
        *args: str,
        cwd: Path | None = None,
        check: bool = True,
        env: Mapping[str, str] | None = None,
        what: str = "",
        hint: str = "",
        input: str | None = None,
    ) -> subprocess.CompletedProcess[str]:
        """`git <args>` in `cwd` (default: the repository), `input` on its stdin; a failure is a GitError
        unless `check` is off."""
        folder = self._at(cwd)
        command = ("git", *ALWAYS, *args)
        shown = "git " + " ".join(args)
        if not folder.is_dir():
            raise GitError(
                f"Cannot run `{shown}`: the folder {folder} does not exist",
                hint="Check the repository or worktree path.",
                command=command,
            )
        environ = {k: v for k, v in os.environ.items() if k not in LOCAL_VARIABLES}
        environ.update(QUIET_ENV)
        if self.git_dir is not None:
            own = str(self.git_dir)
            environ.update(GIT_DIR=own, GIT_COMMON_DIR=own, GIT_WORK_TREE=str(self.repo))
        environ.update(env or {})
        try:
            result = subprocess.run(
                command,
                cwd=folder,
                env=environ,
                **({"stdin": subprocess.DEVNULL} if input is None else {"input": input}),
                capture_output=True,
                text=True,
                encoding="utf-8",
                errors="surrogateescape",
                timeout=self.timeout,
                check=False,
            )
        except FileNotFoundError as e:
            raise GitError("git is not installed or not on PATH", hint="Install git.", command=command) from e
        except subprocess.TimeoutExpired as e:
            raise GitError(
                f"`{shown}` in {folder} did not finish within {self.timeout:g} s",
                hint="A git hook or another git process may be stuck (look for a leftover .git/index.lock).",
                command=command,
            ) from e
        if check and result.returncode != 0:
            raise GitError(
                what or f"`{shown}` failed in {folder}",
                hint=hint or f"Look at the repository with `git -C {folder} status`.",
                command=command,
                stderr=result.stderr,
                returncode=result.returncode,
            )
        return result

    def output(
        self, *args: str, cwd: Path | None = None, what: str = "", hint: str = "", input: str | None = None
    ) -> str:
        return self.run(*args, cwd=cwd, what=what, hint=hint, input=input).stdout

    def _at(self, path: Path | None) -> Path:
        if path is None:
            return self.repo
        return path if path.is_absolute() else self.repo / path

    def identity(self) -> dict[str, str]:
        """Environment for commits ittybus makes itself: the repository's identity, else ittybus's own."""
        found = self.run("config", "--get-regexp", r"^(user|author|committer)\.(name|email)$", check=False)
        return identity_env(parse_config_list(found.stdout), os.environ)

    # -- the repository ------------------------------------------------------------------------------------

    def current_branch(self, path: Path | None = None) -> str | None:
        """The branch checked out, None when HEAD is detached (also in the middle of a rebase)."""
        result = self.run("symbolic-ref", "--quiet", "HEAD", cwd=self._at(path), check=False)
        if result.returncode == 0:
            return result.stdout.strip().removeprefix("refs/heads/")
        if result.returncode == 1:
            return None
        raise GitError(
            f"Cannot read HEAD in {self._at(path)}", stderr=result.stderr, hint="Is it a git repository?"
        )

    def branch_exists(self, name: str) -> bool:
        result = self.run("rev-parse", "--verify", "--quiet", f"refs/heads/{name}", check=False)
        return result.returncode == 0

    def rev_parse(self, rev: str, path: Path | None = None) -> str:
        _check_rev(rev)
        return self.output(
            "rev-parse",
            "--verify",
            f"{rev}^{{commit}}",
            cwd=self._at(path),
            what=f"{rev} is not a commit in {self._at(path)}",
            hint="Check the branch or commit name.",
        ).strip()

    def head(self, path: Path | None = None) -> str:
        return self.rev_parse("HEAD", path)

    def status(self, path: Path | None = None) -> list[StatusEntry]:
        out = self.output("status", "--porcelain=v1", "-z", "--untracked-files=normal", cwd=self._at(path))
        return parse_status(out)

    def status_short(self, path: Path | None = None) -> str:
        return self.output("status", "--short", cwd=self._at(path))

    def conflict_files(self, path: Path | None = None) -> list[str]:
        """The paths with an unresolved conflict in that working tree, sorted."""
        return conflicted(self.status(path))

    def rebase_in_progress(self, path: Path | None = None) -> bool:
        return self._rebase_folder(path) is not None

    def rebasing_branch(self, path: Path | None = None) -> str | None:
        """The branch a rebase in progress in that worktree is rewriting, if any."""
        folder = self._rebase_folder(path)
        if folder is None:
            return None
        try:
            name = (folder / "head-name").read_text(encoding="utf-8").strip()
        except OSError:
            return None
        return name.removeprefix("refs/heads/") if name.startswith("refs/heads/") else None

    def _rebase_folder(self, path: Path | None) -> Path | None:
        at = self._at(path)
        for line in self.output(
            "rev-parse", "--git-path", "rebase-merge", "--git-path", "rebase-apply", cwd=at
        ).split("\n"):
            if line and (at / line).is_dir():  # `at / absolute` is the absolute path
                return at / line
        return None

    def merge_in_progress(self, path: Path | None = None) -> bool:
        result = self.run("rev-parse", "--quiet", "--verify", "MERGE_HEAD", cwd=self._at(path), check=False)
        return result.returncode == 0

    # -- worktrees and branches ----------------------------------------------------------------------------

    def worktrees(self) -> list[WorktreeInfo]:
        if self.git_dir is not None:  # an agent's repository has one checkout: its work tree
            branch = self.current_branch()
            return [WorktreeInfo(path=self.repo, branch=branch, detached=branch is None)]
        return parse_worktrees(self.output("worktree", "list", "--porcelain"))

    def add_worktree(self, path: Path, branch: str, base: str) -> None:
        """A new worktree at `path` on a new branch `branch` starting at `base`."""
        _check_rev(base)
        checked = self.run("check-ref-format", "--branch", branch, check=False)
        if checked.returncode != 0 or branch.startswith("-"):
            raise GitError(
                f"{branch!r} cannot be a branch name", hint="Use letters, digits, '-', '_' and '/'."
            )
        if self.branch_exists(branch):
            raise GitError(
                f"Cannot create the worktree {path}: the branch {branch} already exists",
                hint=f"Use another agent id, or delete the old branch (git branch -D {branch}).",
            )
        self.run(
            "worktree",
            "add",
            "--no-track",
            "-b",
            branch,
            str(self._at(path)),
            base,
            what=f"Cannot create the worktree {path} on a new branch {branch} from {base}",
            hint="Check that the folder is free and the base exists.",
        )

    def remove_worktree(self, path: Path, force: bool = False) -> None:
        """Remove a worktree; one whose folder is already gone is pruned. `force` throws away what is
        uncommitted in it (and removes a locked one)."""
        target = self._at(path)
        if not target.exists():
            self.run("worktree", "prune", what=f"Cannot prune the worktree {target} whose folder is gone")
            return
        listed = self.worktrees()
        known = {info.path.resolve(): info for info in listed[1:]}
        info = known.get(target.resolve())
        if info is None:
            raise GitError(
                f"{target} is not a linked worktree of {self.repo}",
                hint="Nothing was removed; check the path (the main working tree is never removed).",
            )
        strength = (
            ["--force", "--force"] if force and info.locked is not None else ["--force"] if force else []
        )
        self.run(
            "worktree",
            "remove",
            *strength,
            str(target),
            what=f"Cannot remove the worktree {target}",
            hint="It holds uncommitted or untracked files: commit them, or remove it with force.",
        )

    def delete_branch(self, branch: str, force: bool = False) -> None:
        _check_rev(branch)
        self.run(
            "branch",
            "-D" if force else "-d",
            branch,
            what=f"Cannot delete the branch {branch}",
            hint="Remove its worktree first; a branch with unmerged commits needs force (losing them).",
        )

    # -- what a branch changed -----------------------------------------------------------------------------

    def ahead(self, branch: str, base: str) -> list[Commit]:
        """Commits on `branch` that are not on `base`, newest first."""
        return parse_log(self._compare(branch, base, "log", f"--format={LOG_FORMAT}", f"{base}..{branch}"))

    def log(self, branch: str, base: str) -> str:
        return self._compare(branch, base, "log", "--format=%h %s", f"{base}..{branch}")

    def diff(self, base: str, branch: str, stat: bool = False) -> str:
        """What `branch` changed since it left `base` (three dots: base's later commits do not show)."""
        return self._compare(
            branch, base, "diff", "--no-ext-diff", *(["--stat"] if stat else []), f"{base}...{branch}"
        )

    def change_size(self, base: str, branch: str) -> ChangeSize:
        """The files and lines `branch` changes since it left `base`; a rename counts as both its paths."""
        return parse_numstat(
            self._compare(
                branch, base, "diff", "--no-ext-diff", "--numstat", "--no-renames", "-z", f"{base}...{branch}"
            )
        )

    def _compare(self, branch: str, base: str, *args: str) -> str:
        _check_rev(branch, base)
        return self.output(
            *args,
            what=f"Cannot compare {branch} with {base}",
            hint="Check that both exist (git branch --list).",
        )

    # -- rebase and merge ----------------------------------------------------------------------------------

    def rebase(self, worktree: Path, onto: str) -> RebaseResult:
        """Rebase the branch of `worktree` onto `onto`. A conflict is undone (`rebase --abort`): the worktree
        is left exactly as it was and the conflicting files are returned. Uncommitted changes are refused."""
        at = self._at(worktree)
        _check_rev(onto)
        self._refuse_busy(at)
        dirty = changes(self.status(at), untracked=False)
        if dirty:
            raise GitError(
                f"Cannot rebase {at}: it has uncommitted changes ({_names(dirty)})",
                hint="Commit or stash them first, then rebase again; nothing was changed.",
            )
        before = self.head(at)
        result = self.run(*STEPS, "rebase", "--no-autostash", onto, cwd=at, check=False, env=self.identity())
        if result.returncode == 0:
            return RebaseResult(ok=True, head=self.head(at))
        conflicts = self.conflict_files(at)
        if self.rebase_in_progress(at):
            self.run("rebase", "--abort", cwd=at, what=f"Cannot undo the failed rebase in {at}")
        if not conflicts:
            raise GitError(
                f"Rebasing {at} onto {onto} failed",
                hint="The worktree is as it was; look at it with `git status`.",
                command=("git", "rebase", onto),
                stderr=result.stderr,
                returncode=result.returncode,
            )
        return RebaseResult(ok=False, head=before, conflicts=conflicts)

    def merge_into(self, target: str, branch: str, message: str) -> MergeResult:
        """Merge `branch` into `target` with a merge commit, made beside any checkout (worker/git/landing.py):
        the branch moves in one atomic step guarded by its old tip, and where it is checked out (only when
        that checkout has no uncommitted change the merge could touch) the merged files follow. A merge
        a crash cut short there is finished or undone first. A conflict returns the files, changes nothing."""
        for name in (target, branch):
            if not self.branch_exists(name):
                raise GitError(f"Cannot merge: there is no branch {name}", hint="Check the branch names.")
        checkout, is_main = self._checkout_of(target)
        if checkout is not None:
            landing.recover(self, checkout)
        old = self.rev_parse(f"refs/heads/{target}")
        commits = self.ahead(f"refs/heads/{branch}", f"refs/heads/{target}")
        if not commits:
            return MergeResult(ok=True, sha=old)
        if checkout is not None:
            self._refuse_in_the_way(checkout, is_main, target, branch)
        tip = self.rev_parse(f"refs/heads/{branch}")
        new, conflicts = self.merge_commit(old, tip, message)
        if new is None:
            return MergeResult(ok=False, sha=None, commits=commits, conflicts=conflicts)
        if checkout is None:
            landing.move_unchecked_out(self, target, old, new, branch)
        else:
            landing.move(self, landing.Journal(target, branch, old, new, str(checkout)))
        return MergeResult(ok=True, sha=new, commits=commits)

    def merge_commit(self, base: str, tip: str, message: str) -> tuple[str | None, list[str]]:
        """The merge commit of `tip` into `base` (parents in that order), made without any checkout; None and
        the conflicted files when they do not merge cleanly. Only objects are written."""
        done = self.run("merge-tree", "--write-tree", "--name-only", "--no-messages", base, tip, check=False)
        if done.returncode not in (0, 1):
            raise GitError(
                f"Cannot merge {tip[:7]} into {base[:7]}",
                hint="Nothing was changed; look at the repository with `git status`.",
                command=("git", "merge-tree", "--write-tree", base, tip),
                stderr=done.stderr,
                returncode=done.returncode,
            )
        lines = done.stdout.splitlines()
        if done.returncode == 1:
            return None, sorted({line for line in lines[1:] if line.strip()})
        tree = lines[0].strip()
        made = self.run("commit-tree", tree, "-p", base, "-p", tip, "-m", message, env=self.identity())
        return made.stdout.strip(), []

    def _checkout_of(self, branch: str) -> tuple[Path | None, bool]:
        """Where `branch` is checked out (and whether that is the main working tree); refuses a branch that
        is being rebased somewhere, whose ref the rebase would overwrite when it ends."""
        for index, info in enumerate(self.worktrees()):
            if info.bare or info.prunable is not None:
                continue
            if info.branch == branch:
                return info.path, index == 0
            if info.detached and self.rebasing_branch(info.path) == branch:
                raise GitError(
                    f"Cannot merge into {branch}: it is being rebased in {info.path}",
                    hint="Finish the rebase (git rebase --continue) or abort it (git rebase --abort) first.",
                )
        return None, False

    def _refuse_busy(self, at: Path) -> None:
        if self.rebase_in_progress(at) or self.merge_in_progress(at):
            raise GitError(
                f"{at} is in the middle of a rebase or merge",
                hint="Finish it or abort it (git rebase --abort / git merge --abort), then try again.",
            )

    def _refuse_in_the_way(self, at: Path, is_main: bool, target: str, branch: str) -> None:
        self._refuse_busy(at)
        dirty = self._in_the_way(at, target, branch)
        if dirty:
            place = (
                f"the main checkout {at}" if is_main else f"the worktree {at}, where {target} is checked out,"
            )
            raise GitError(
                f"Cannot merge {branch} into {target}: {place} has uncommitted changes ({_names(dirty)}); "
                "commit or stash them, then merge again",
                hint="Nothing was changed.",
            )

    def _in_the_way(self, at: Path, target: str, branch: str) -> list[StatusEntry]:
        """Uncommitted changes a merge of `branch` could touch: anything staged (git would record it in
        the merge commit), and unstaged changes to files the branch changed. Edits elsewhere — the status
        block ittybus keeps in CLAUDE.md, the person's work in progress — stay as they are."""
        dirty = changes(self.status(at), untracked=True)
        touched = set(parse_names(self.output("diff", "--name-only", "-z", f"{target}...{branch}", cwd=at)))
        return [e for e in dirty if e.code[0] not in " ?" or e.path in touched or e.orig_path in touched]


def _check_rev(*revs: str) -> None:
    for rev in revs:
        if not rev or rev.startswith("-") or any(c in rev for c in "\0\n\r "):
            raise GitError(f"{rev!r} is not a valid branch or commit name", hint="Check the name you gave.")


def _names(entries: list[StatusEntry], limit: int = 5) -> str:
    names = [entry.path for entry in entries]
    return ", ".join(names[:limit]) + (f" and {len(names) - limit} more" if len(names) > limit else "")


__all__ = ["Commit", "Git", "MergeResult", "RebaseResult", "WorktreeInfo"]
