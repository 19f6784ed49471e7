"""Reading a Bash command line the way the permission checks need it: each simple command with its
words and its redirections (`command_parts`, `simple_commands`), and where its `cd` / `pushd` commands
go (`cd_targets`).

Imports `shlex` and `re`, so the hot hook loads it only for Bash calls.
"""

from __future__ import annotations

import posixpath
import re
import shlex

from worker.permissions.paths import normalize

TYPE_CHECKING = False  # typing costs milliseconds on the hooks' path; the checker still sees the types
if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping
    from typing import TypeAlias

    Part: TypeAlias = tuple[list[str], list[tuple[str, str]]]
    """The words of one simple command, and its redirections as (operator, target)."""

_SKIP_WORDS = frozenset({"if", "then", "else", "elif", "do", "while", "until", "{", "!", "time", "exec"})
_PREFIX_COMMANDS = frozenset({"builtin", "command", "nohup", "env"})
_SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh"})
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=.*", re.DOTALL)
_VARIABLE = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))")
_HEREDOC = re.compile(r"<<(?!<)-?\s*(['\"]?)([A-Za-z_][A-Za-z0-9_]*)\1")
_NESTING = 3


def simple_commands(command: str) -> list[list[str]]:
    """The words of each simple command in a shell line: split at `;`, `&&`, `||`, `|`, parentheses and
    new lines, quotes removed, redirections left out; the insides of `$( )`, backticks, `sh -c '...'`
    and `eval` are commands too. Unbalanced quotes fall back to splitting at blanks."""
    return [words for words, _ in command_parts(command) if words]


def command_parts(command: str, depth: int = 0) -> list[Part]:
    """Each simple command of a shell line as (words, redirections); see `simple_commands`. Heredoc
    bodies are text, not commands."""
    text = _backticks_as_substitution(_drop_heredoc_bodies(command).replace("\n", " ; "))
    lexer = shlex.shlex(text, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    try:
        tokens = list(lexer)
    except ValueError:
        tokens = text.split()
    parts: list[Part] = []
    words: list[str] = []
    redirects: list[tuple[str, str]] = []
    pending: str | None = None  # a redirection operator waiting for its target
    for token in tokens:
        if token and all(c in "();<>|&" for c in token):
            if ("<" in token or ">" in token) and "(" not in token:
                pending = token
                continue
            parts.append((words, redirects))
            words, redirects, pending = [], [], None
            continue
        if pending is not None:
            redirects.append((pending, token))
            pending = None
        else:
            words.append(token)
        if depth < _NESTING:
            parts.extend(_nested(token, depth + 1))
    parts.append((words, redirects))
    stripped = [(_strip_prefix(w), r) for w, r in parts]
    stripped.extend(_inner_scripts([w for w, _ in stripped], depth))
    return [(w, r) for w, r in stripped if w or r]


def _drop_heredoc_bodies(text: str) -> str:
    """The line without the bodies of its heredocs (`<<EOF` ... `EOF`)."""
    if "<<" not in text:
        return text
    kept: list[str] = []
    waiting: list[str] = []
    for line in text.split("\n"):
        if waiting:
            if line.strip() == waiting[0]:
                waiting.pop(0)
            continue
        kept.append(line)
        waiting.extend(m.group(2) for m in _HEREDOC.finditer(line))
    return "\n".join(kept)


def _backticks_as_substitution(text: str) -> str:
    """`cmd` written as $(cmd), so one rule finds commands in both."""
    parts = text.split("`")
    out = [parts[0]]
    for i, part in enumerate(parts[1:]):
        out.append(("$(" if i % 2 == 0 else ")") + part)
    return "".join(out)


def _nested(token: str, depth: int) -> Iterator[Part]:
    """Commands inside a quoted word: what follows a `$(` left in it after quote removal."""
    if "$(" in token:
        yield from command_parts(token[token.index("$(") + 2 :], depth)


def _inner_scripts(commands: list[list[str]], depth: int) -> Iterator[Part]:
    """The script of `sh -c '...'` (and bash, zsh, ...) and the words of `eval ...`, as commands."""
    if depth >= _NESTING:
        return
    for words in commands:
        if len(words) >= 3 and posixpath.basename(words[0]) in _SHELLS and "-c" in words:
            at = words.index("-c")
            if at + 1 < len(words):
                yield from command_parts(words[at + 1], depth + 1)
        elif len(words) >= 2 and words[0] == "eval":
            yield from command_parts(" ".join(words[1:]), depth + 1)


def _strip_prefix(words: list[str]) -> list[str]:
    """Drop what runs a command without being it: keywords, `VAR=value`, `builtin` / `command` / `env`."""
    i = 0
    while i < len(words):
        while i < len(words) and (words[i] in _SKIP_WORDS or _ASSIGNMENT.fullmatch(words[i])):
            i += 1
        if i < len(words) and words[i] in _PREFIX_COMMANDS:
            i += 1
            continue
        break
    return words[i:]


def assignments(command: str) -> dict[str, str]:
    """Every `NAME=value` word of a line (also after `export` / `local`), quotes removed; the last wins."""
    lexer = shlex.shlex(command.replace("\n", " ; "), posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    try:
        tokens = list(lexer)
    except ValueError:
        tokens = command.split()
    found: dict[str, str] = {}
    for token in tokens:
        if _ASSIGNMENT.fullmatch(token):
            name, _, value = token.partition("=")
            found[name] = value
    return found


def cd_targets(command: str, *, cwd: str, home: str, variables: Mapping[str, str]) -> list[str]:
    """Where the `cd` / `pushd` commands of a shell line go, as normalised absolute paths, following
    the directory from one to the next. Targets that cannot be known (`cd -`, `$UNKNOWN`) are left out;
    `$HOME`, `$PWD` and `variables` are expanded."""
    return [t for t in cd_moves(command, cwd=cwd, home=home, variables=variables) if t is not None]


def cd_moves(command: str, *, cwd: str, home: str, variables: Mapping[str, str]) -> list[str | None]:
    """Like `cd_targets`, with None for a `cd` whose target holds a variable nobody can know here."""
    here = normalize(cwd, base="/", home=home)
    targets: list[str | None] = []
    for words in simple_commands(command):
        if words[0] not in ("cd", "pushd"):
            continue
        target = _cd_argument(words, home)
        if target is None:
            continue
        expanded = expand(target, {"HOME": home, "PWD": here, **variables})
        if expanded is None:
            if "$(" not in target:
                targets.append(None)
            continue
        here = normalize(expanded, base=here, home=home)
        targets.append(here)
    return targets


def expand(text: str, known: Mapping[str, str]) -> str | None:
    """`$NAME` and `${NAME}` replaced from `known`; None when something else would be expanded."""
    expanded = _VARIABLE.sub(lambda m: known.get(m.group(1) or m.group(2), "\0"), text)
    return None if "\0" in expanded or "$" in expanded else expanded


def _cd_argument(words: list[str], home: str) -> str | None:
    args = words[1:]
    while args and args[0].startswith("-") and args[0] != "-" and not args[0][1:].isdigit():
        done = args[0] == "--"
        args = args[1:]
        if done:
            break
    if not args:
        return home if words[0] == "cd" else None
    target = args[0]
    if target == "-" or (words[0] == "pushd" and re.fullmatch(r"[+-]\d+", target)):
        return None
    return target
