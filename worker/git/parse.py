"""Reading what git prints: `worktree list --porcelain`, `status --porcelain=v1 -z`, our one-line log format,
`diff --stat` totals, NUL-separated name lists, the gist of an error, and the identity a commit would use.
Pure: no subprocess here; worker/git/repo.py runs the commands."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

LOG_FORMAT = "%H%x1f%s"
"""The `--format` whose lines `parse_log` reads: full sha, a unit separator, the subject."""

UNMERGED = frozenset({"DD", "AU", "UD", "UA", "DU", "AA", "UU"})
"""The XY codes of `git status --porcelain` for a path with an unresolved conflict."""

FALLBACK_NAME = "ittybus"
FALLBACK_EMAIL = "ittybus@localhost"

_C_ESCAPES = {"a": 7, "b": 8, "f": 12, "n": 10, "r": 13, "t": 9, "v": 11, '"': 34, "\\": 92}


@dataclass(frozen=True)
class WorktreeInfo:
    """One entry of `git worktree list`: the first one is the main working tree."""

    path: Path
    head: str | None = None
    branch: str | None = None
    """Short name (`agent/x`), None when detached or bare."""
    detached: bool = False
    bare: bool = False
    locked: str | None = None
    """None when not locked, else the reason (empty when none was given)."""
    prunable: str | None = None
    """None when the worktree is fine, else why git would prune it (its folder is gone, ...)."""


@dataclass(frozen=True)
class StatusEntry:
    """One path of `git status --porcelain=v1 -z`: X is the index side, Y the working tree side."""

    code: str
    path: str
    orig_path: str | None = None
    """Where a renamed or copied path came from."""

    @property
    def unmerged(self) -> bool:
        return self.code in UNMERGED

    @property
    def untracked(self) -> bool:
        return self.code == "??"

    @property
    def ignored(self) -> bool:
        return self.code == "!!"


@dataclass(frozen=True)
class Commit:
    sha: str
    subject: str


@dataclass(frozen=True)
class ChangeSize:
    """What a branch changes: its files and its changed lines (added + removed; a binary file counts 1)."""

    files: tuple[str, ...] = ()
    lines: int = 0


def parse_numstat(text: str) -> ChangeSize:
    """`git diff --numstat --no-renames -z` output (`ADDED\tREMOVED\tPATH\0`; `-` counts for binary)."""
    files, lines = [], 0
    for record in text.split("\0"):
        added, _, rest = record.partition("\t")
        removed, _, path = rest.partition("\t")
        if not path:
            continue
        files.append(path)
        lines += 1 if added == "-" else int(added) + int(removed)
    return ChangeSize(tuple(sorted(files)), lines)


def unquote_path(text: str) -> str:
    """A path as git prints it outside `-z` output: C-style quoted (`"a\\tb\\303\\251"`) when unusual."""
    if len(text) < 2 or not (text.startswith('"') and text.endswith('"')):
        return text
    body = text[1:-1]
    out = bytearray()
    i = 0
    while i < len(body):
        char = body[i]
        if char != "\\" or i + 1 == len(body):
            out += char.encode("utf-8", "surrogateescape")
            i += 1
            continue
        octal = body[i + 1 : i + 4]
        if body[i + 1] in _C_ESCAPES:
            out.append(_C_ESCAPES[body[i + 1]])
            i += 2
        elif len(octal) == 3 and all(digit in "01234567" for digit in octal):
            out.append(int(octal, 8) & 0xFF)
            i += 4
        else:
            out += char.encode()
            i += 1
    return out.decode("utf-8", "surrogateescape")


def parse_worktrees(text: str) -> list[WorktreeInfo]:
    """`git worktree list --porcelain`, one field a line (or NUL-terminated with `-z`); an empty line ends
    each worktree's record."""
    lines = text.split("\0") if "\0" in text else text.split("\n")
    infos: list[WorktreeInfo] = []
    fields: dict[str, str] = {}
    for line in [*lines, ""]:
        if not line:
            if "worktree" in fields:
                infos.append(_worktree(fields))
            fields = {}
            continue
        key, _, value = line.partition(" ")
        fields[key] = value
    return infos


def _worktree(fields: Mapping[str, str]) -> WorktreeInfo:
    branch = fields.get("branch")
    return WorktreeInfo(
        path=Path(unquote_path(fields["worktree"])),
        head=fields.get("HEAD"),
        branch=branch.removeprefix("refs/heads/") if branch is not None else None,
        detached="detached" in fields,
        bare="bare" in fields,
        locked=unquote_path(fields["locked"]) if "locked" in fields else None,
        prunable=fields.get("prunable"),
    )


def parse_status(text: str) -> list[StatusEntry]:
    """`git status --porcelain=v1 -z`: `XY path\\0`, and for a rename or copy `XY new\\0old\\0`."""
    items = text.split("\0")
    entries: list[StatusEntry] = []
    i = 0
    while i < len(items):
        item = items[i]
        i += 1
        if len(item) < 4 or item[2] != " ":
            continue
        code, path = item[:2], item[3:]
        orig = None
        if ("R" in code or "C" in code) and i < len(items):
            orig = items[i]
            i += 1
        entries.append(StatusEntry(code, path, orig))
    return entries


def conflicted(entries: list[StatusEntry]) -> list[str]:
    """The paths with an unresolved conflict, sorted."""
    return sorted({entry.path for entry in entries if entry.unmerged})


def changes(entries: list[StatusEntry], *, untracked: bool, ignore_under: str = ".ib") -> list[StatusEntry]:
    """What makes a working tree not clean: every tracked change, and (when asked) untracked paths outside
    `ignore_under/` (our own folder of agents and temporary merges). Ignored files never count."""
    prefix = ignore_under.rstrip("/") + "/"
    kept: list[StatusEntry] = []
    for entry in entries:
        if entry.ignored:
            continue
        if entry.untracked and (not untracked or entry.path == ignore_under or entry.path.startswith(prefix)):
            continue
        kept.append(entry)
    return kept


def parse_names(text: str) -> list[str]:
    """A name list: `--name-only -z` (NUL-separated) or one name a line."""
    separator = "\0" if "\0" in text else "\n"
    return [name for name in text.split(separator) if name]


def parse_log(text: str) -> list[Commit]:
    """Lines of `git log --format=%H%x1f%s` (see `LOG_FORMAT`), newest first as git prints them."""
    commits: list[Commit] = []
    for line in text.splitlines():
        sha, sep, subject = line.partition("\x1f")
        if sep and sha:
            commits.append(Commit(sha.strip(), subject))
    return commits


def ref_slug(name: str) -> str:
    """A branch name as one folder name: `agent/a b` -> `agent-a-b`."""
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-.")
    return slug or "branch"


def parse_config_list(text: str) -> dict[str, str]:
    """`git config --get-regexp` output (`key value` lines, a bare `key` for a valueless one); the last one
    wins, as it does for git. Keys are lowercased, as git prints them."""
    config: dict[str, str] = {}
    for line in text.splitlines():
        key, _, value = line.partition(" ")
        if key:
            config[key.lower()] = value
    return config


def identity_env(config: Mapping[str, str], environ: Mapping[str, str]) -> dict[str, str]:
    """The environment variables that give a commit made by ittybus an author and a committer: nothing where
    the person's environment (`GIT_AUTHOR_NAME`, ...) or config (`author.name`, `user.name`, ...) already
    says who, else `ittybus <ittybus@localhost>` so that it works on a machine with no identity at all."""
    fallback = {"name": FALLBACK_NAME, "email": FALLBACK_EMAIL}
    env: dict[str, str] = {}
    for role in ("author", "committer"):
        for field in ("name", "email"):
            variable = f"GIT_{role.upper()}_{field.upper()}"
            if environ.get(variable) or config.get(f"{role}.{field}") or config.get(f"user.{field}"):
                continue
            if field == "email" and environ.get("EMAIL"):
                continue  # git uses $EMAIL before guessing
            env[variable] = fallback[field]
    return env


__all__ = [
    "FALLBACK_EMAIL",
    "FALLBACK_NAME",
    "LOG_FORMAT",
    "UNMERGED",
    "Commit",
    "StatusEntry",
    "WorktreeInfo",
    "changes",
    "conflicted",
    "identity_env",
    "parse_config_list",
    "parse_log",
    "parse_names",
    "parse_status",
    "parse_worktrees",
    "ref_slug",
    "unquote_path",
]


@dataclass(frozen=True)
class TreeChange:
    """One path that differs between two commits (`git diff-tree -r -z --no-renames`); a sha is None on
    the side where the path does not exist."""

    path: str
    old_mode: str
    new_mode: str
    old_blob: str | None
    new_blob: str | None

    @property
    def plain(self) -> bool:
        """A regular file on both sides where it exists (not a link, not a submodule)."""
        return all(mode in ("000000", "100644", "100755") for mode in (self.old_mode, self.new_mode))


def parse_tree_changes(text: str) -> list[TreeChange]:
    """`git diff-tree -r -z --no-renames --no-abbrev A B`: `:<mode> <mode> <sha> <sha> <status>` NUL path."""
    fields = text.split("\0")
    found = []
    for head, path in zip(fields[0::2], fields[1::2], strict=False):
        if not head.startswith(":"):
            continue
        old_mode, new_mode, old_sha, new_sha, _status = head[1:].split(" ")
        found.append(
            TreeChange(
                path,
                old_mode,
                new_mode,
                None if set(old_sha) == {"0"} else old_sha,
                None if set(new_sha) == {"0"} else new_sha,
            )
        )
    return found
