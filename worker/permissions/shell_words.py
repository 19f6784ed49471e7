"""Reading a Bash command line the way the permission checks need it: the words of each simple command
(`simple_commands`) and where its `cd` / `pushd` commands go (`cd_targets`).

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

_SKIP_WORDS = frozenset({"if", "then", "else", "elif", "do", "while", "until", "{", "!", "time", "exec"})
_PREFIX_COMMANDS = frozenset({"builtin", "command"})
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=.*", re.DOTALL)
_VARIABLE = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))")
_NESTING = 3


def simple_commands(command: str, depth: int = 0) -> list[list[str]]:
    """The words of each simple command in a shell line: split at `;`, `&&`, `||`, `|`, parentheses,
    redirections and new lines, quotes removed; the insides of `$( )`, backticks and `sh -c '...'` are
    commands too. Unbalanced quotes fall back to splitting at blanks."""
    text = _backticks_as_substitution(command.replace("\n", " ; "))
    lexer = shlex.shlex(text, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    try:
        tokens = list(lexer)
    except ValueError:
        tokens = text.split()
    commands: list[list[str]] = []
    current: list[str] = []
    for token in tokens:
        if token and all(c in "();<>|&" for c in token):
            commands.append(current)
            current = []
            continue
        current.append(token)
        if depth < _NESTING:
            commands.extend(_nested(token, depth + 1))
    commands.append(current)
    words = [_strip_prefix(c) for c in commands]
    words.extend(_shell_c(words, depth))
    return [c for c in words if c]


def _backticks_as_substitution(text: str) -> str:
    """`cmd` written as $(cmd), so one rule finds commands in both."""
    parts = text.split("`")
    out = [parts[0]]
    for i, part in enumerate(parts[1:]):
        out.append(("$(" if i % 2 == 0 else ")") + part)
    return "".join(out)


def _nested(token: str, depth: int) -> Iterator[list[str]]:
    """Commands inside a quoted word: what follows a `$(` left in it after quote removal."""
    if "$(" in token:
        yield from simple_commands(token[token.index("$(") + 2 :], depth)


def _shell_c(commands: list[list[str]], depth: int) -> Iterator[list[str]]:
    if depth >= _NESTING:
        return
    for words in commands:
        if (
            len(words) >= 3
            and posixpath.basename(words[0]) in ("sh", "bash", "zsh", "dash")
            and "-c" in words
        ):
            at = words.index("-c")
            if at + 1 < len(words):
                yield from simple_commands(words[at + 1], depth + 1)


def _strip_prefix(words: list[str]) -> list[str]:
    """Drop what runs a command without being it: keywords, `VAR=value`, `builtin` / `command`."""
    i = 0
    while i < len(words) and (words[i] in _SKIP_WORDS or _ASSIGNMENT.fullmatch(words[i])):
        i += 1
    if i < len(words) and words[i] in _PREFIX_COMMANDS:
        i += 1
    return words[i:]


def cd_targets(command: str, *, cwd: str, home: str, variables: Mapping[str, str]) -> list[str]:
    """Where the `cd` / `pushd` commands of a shell line go, as normalised absolute paths, following
    the directory from one to the next. Targets that cannot be known (`cd -`, `$UNKNOWN`) are left out;
    `$HOME`, `$PWD` and `variables` are expanded."""
    here = normalize(cwd, base="/", home=home)
    targets: list[str] = []
    for words in simple_commands(command):
        if words[0] not in ("cd", "pushd"):
            continue
        target = _cd_argument(words, home)
        if target is None:
            continue
        expanded = _expand(target, {"HOME": home, "PWD": here, **variables})
        if expanded is None:
            continue
        here = normalize(expanded, base=here, home=home)
        targets.append(here)
    return targets


def _expand(text: str, known: Mapping[str, str]) -> str | None:
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
