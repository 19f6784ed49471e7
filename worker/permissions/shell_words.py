"""Reading a Bash command line the way the permission checks need it: each simple command with its
words and its redirections (`command_parts`, `simple_commands`), and where its `cd` / `pushd` commands
go (`cd_targets`).

Imports `shlex` and `re`, so the hot hook loads it only for Bash calls.
"""

from __future__ import annotations

import re
import shlex

from worker.permissions.paths import normalize
from worker.permissions.wrappers import commands_run_by, shell_script

TYPE_CHECKING = False  # typing costs milliseconds on the hooks' path; the checker still sees the types
if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping
    from typing import TypeAlias

    Part: TypeAlias = tuple[list[str], list[tuple[str, str]]]
    """The words of one simple command, and its redirections as (operator, target)."""

_SKIP_WORDS = frozenset({"if", "then", "else", "elif", "do", "while", "until", "{", "!"})
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=.*", re.DOTALL)
_VARIABLE = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))")
_HEREDOC = re.compile(r"<<(?!<)-?\s*(['\"]?)([A-Za-z_][A-Za-z0-9_]*)\1")
_NESTING = 3


def simple_commands(command: str) -> list[list[str]]:
    """The words of each simple command in a shell line: split at `;`, `&&`, `||`, `|`, parentheses and
    new lines, quotes removed, redirections left out; the insides of `$( )`, backticks, `sh -c '...'`,
    `bash <<< '...'`, a shell's heredoc and `eval` are commands too, and so is what a wrapper runs
    (`sudo git push` is also `git push`: worker.permissions.wrappers). Unbalanced quotes fall back to
    splitting at blanks."""
    return [words for words, _ in command_parts(command) if words]


def command_parts(command: str, depth: int = 0) -> list[Part]:
    """Each simple command of a shell line as (words, redirections); see `simple_commands`. A heredoc's
    body is the target of its `<<` (text, unless a shell reads it as its script)."""
    text, bodies = _heredoc_bodies(command)
    text = _backticks_as_substitution(text.replace("\n", " ; "))
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
            redirects.append((pending, bodies.pop(0) if pending == "<<" and bodies else token))
            pending = None
        else:
            words.append(token)
        if depth < _NESTING:
            parts.extend(_nested(token, depth + 1))
    parts.append((words, redirects))
    stripped = [(_strip_prefix(w), r) for w, r in parts]
    layered = [(w, r) for words, r in stripped for w in (words, *commands_run_by(words))]
    layered.extend(_inner_scripts(layered, depth))
    return [(w, r) for w, r in layered if w or r]


def _heredoc_bodies(text: str) -> tuple[str, list[str]]:
    """The line without the bodies of its heredocs (`<<EOF` ... `EOF`), and the bodies in order."""
    if "<<" not in text:
        return text, []
    kept: list[str] = []
    bodies: list[str] = []
    waiting: list[str] = []
    body: list[str] = []
    for line in text.split("\n"):
        if waiting:
            if line.strip() == waiting[0]:
                waiting.pop(0)
                bodies.append("\n".join(body))
                body = []
            else:
                body.append(line)
            continue
        kept.append(line)
        waiting.extend(m.group(2) for m in _HEREDOC.finditer(line))
    return "\n".join(kept), bodies


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


def _inner_scripts(parts: list[Part], depth: int) -> Iterator[Part]:
    """The scripts shells are given (`sh -c '...'`, `bash <<< '...'`) and the words of `eval ...`, as
    commands."""
    if depth >= _NESTING:
        return
    for words, redirects in parts:
        script = shell_script(words, redirects)
        if script:
            yield from command_parts(script, depth + 1)


def _strip_prefix(words: list[str]) -> list[str]:
    """Drop what comes before a command without being one: keywords and `VAR=value`."""
    i = 0
    while i < len(words) and (words[i] in _SKIP_WORDS or _ASSIGNMENT.fullmatch(words[i])):
        i += 1
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
