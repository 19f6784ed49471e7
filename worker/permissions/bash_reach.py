"""Where a Bash command line reaches on disk, as far as reading it can tell: the folders its `cd`s go
to, the files its redirections and writing commands (`rm`, `cp`, `tee`, `sed -i`, ...) change, the
paths its words name, and the repositories `git -C` / `--git-dir` / `--work-tree` point at.

Pure (no file system): paths come back normalised but with links unresolved; the permission check
resolves them. The sandbox is what holds — this is the second line, and it reads what it can.
"""

from __future__ import annotations

import posixpath

from bus.wire.record import Record
from worker.permissions.paths import normalize
from worker.permissions.shell_words import assignments, cd_moves, command_parts, expand

TYPE_CHECKING = False  # typing costs milliseconds on the hooks' path; the checker still sees the types
if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping

WRITE_ALL = frozenset(
    {"rm", "rmdir", "touch", "mkdir", "tee", "truncate", "shred", "unlink", "chmod", "chown", "chgrp"}
)
"""Commands whose every operand is a file they change."""
WRITE_LAST = frozenset({"cp", "mv", "ln", "install", "rsync", "scp"})
"""Commands whose last operand is the file or folder they change (`mv` changes its sources too)."""
SINKS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/zero"})
_GIT_PATH_OPTIONS = ("--git-dir", "--work-tree")


class Reach(Record):
    """One place a command line touches: `kind` is cd, write, read or git; `path` is None when a
    variable nobody can know here decides it (`text` is what was written)."""

    __slots__ = ("kind", "path", "text")

    def __init__(self, kind: str, path: str | None, text: str) -> None:
        self.kind, self.path, self.text = kind, path, text


def reaches(command: str, *, cwd: str, home: str, variables: Mapping[str, str]) -> list[Reach]:
    """Every place the line reaches, in order. Relative paths are taken from `cwd` (a `cd` earlier in
    the line moves it); `$HOME`, `$PWD`, `variables` and the line's own `NAME=value` are expanded."""
    known = {**variables, **assignments(command)}
    out: list[Reach] = []
    moves = cd_moves(command, cwd=cwd, home=home, variables=known)
    here = normalize(cwd, base="/", home=home)
    for target in moves:
        out.append(Reach("cd", target, target or "a folder named by a variable"))
    if moves and moves[-1] is not None:
        here = moves[-1]  # paths after a cd: checking them from the last known folder is good enough
    for words, redirects in command_parts(command):
        for kind, text in _touched(words, redirects):
            out.append(Reach(kind, _path(text, here, home, {"HOME": home, "PWD": here, **known}), text))
    return out


def _path(text: str, here: str, home: str, known: Mapping[str, str]) -> str | None:
    expanded = expand(text, known)
    if expanded is None:
        return None
    return normalize(expanded, base=here, home=home)


def _touched(words: list[str], redirects: list[tuple[str, str]]) -> Iterator[tuple[str, str]]:
    for op, target in redirects:
        if op in ("<<", "<<-", "<<<") or (op.endswith("&") and (target.isdigit() or target == "-")):
            continue
        yield ("write" if ">" in op else "read"), target
    if not words or words[0] in ("cd", "pushd"):
        return  # where a cd goes is `cd_moves`' business
    name = posixpath.basename(words[0])
    if name == "git":
        yield from _git_paths(words[1:])
        return
    operands = _operands(words[1:])
    if name in WRITE_ALL or (name == "sed" and any(w.startswith(("-i", "--in-place")) for w in words)):
        yield from (("write", w) for w in (operands[1:] if name == "sed" else operands))
    elif name in WRITE_LAST and operands:
        yield "write", operands[-1]
        yield from ((("write" if name == "mv" else "read"), w) for w in operands[:-1])
    elif name == "dd":
        for word in words[1:]:
            if word.startswith(("of=", "if=")):
                yield ("write" if word[0] == "o" else "read"), word[3:]
    else:
        yield from (("read", w) for w in words[1:] if _looks_like_path(w))


def _operands(args: list[str]) -> list[str]:
    """The arguments that are not options (everything after `--`)."""
    out: list[str] = []
    for i, arg in enumerate(args):
        if arg == "--":
            return out + args[i + 1 :]
        if not arg.startswith("-") or arg == "-":
            out.append(arg)
    return out


def _git_paths(args: list[str]) -> Iterator[tuple[str, str]]:
    """`git -C DIR`, `--git-dir[=]DIR`, `--work-tree[=]DIR` before the subcommand."""
    i = 0
    while i < len(args) and args[i].startswith("-"):
        arg = args[i]
        if arg == "-C" and i + 1 < len(args):
            yield "git", args[i + 1]
            i += 2
            continue
        for option in _GIT_PATH_OPTIONS:
            if arg == option and i + 1 < len(args):
                yield "git", args[i + 1]
                i += 1
            elif arg.startswith(option + "="):
                yield "git", arg[len(option) + 1 :]
        i += 1 if arg != "-c" else 2


def _looks_like_path(word: str) -> bool:
    """A word that names a file outside the current folder: absolute, `~`, `$VAR/...` or with `..`."""
    return word.startswith(("/", "~", "$")) or ".." in word.split("/")
