"""Commands that run another command, and which one: `env -i`, `nice`, `timeout 5`, `sudo -u x`, `xargs`,
`find -exec`, `command -p`, `exec`, `time`, a program named by its path (`/usr/bin/git` is `git`), and the
script a shell is given (`sh -c '...'`, `bash <<< '...'`, a heredoc). A deny rule for `git push` then
sees `sudo env -i /usr/bin/git push`. Pure; loaded with the shell parser, only for Bash calls.
"""

from __future__ import annotations

import posixpath
import shlex

from bus.wire.record import Record

MAX_LAYERS = 16
"""Wrappers around wrappers are followed this deep (`nice nice nice ... git push`)."""
SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash"})
FIND_ACTIONS = frozenset({"-exec", "-execdir", "-ok", "-okdir"})
STDIN_SCRIPTS = frozenset({"<<<", "<<", "<<-"})
_SHELL_VALUED = frozenset("oO")  # `bash -o pipefail -c ...`: the option's value is no script


class Wrapper(Record):
    """How a wrapper's own words end and the command's begin: short options taking a value (`valued`,
    as letters), long ones (`long_valued`), how many operands come before the command (`timeout`'s
    duration), whether `NAME=value` words may (`assignments`), and the options after which it runs
    nothing (`stops`: `command -v`, `sudo -l`)."""

    __slots__ = ("assignments", "long_valued", "operands", "stops", "valued")

    def __init__(
        self,
        valued: str = "",
        long_valued: frozenset[str] = frozenset(),
        *,
        operands: int = 0,
        assignments: bool = False,
        stops: frozenset[str] = frozenset(),
    ) -> None:
        self.valued, self.long_valued, self.operands = valued, long_valued, operands
        self.assignments, self.stops = assignments, stops


WRAPPERS: dict[str, Wrapper] = {
    "env": Wrapper("uCP", frozenset({"--unset", "--chdir"}), assignments=True),
    "nice": Wrapper("n", frozenset({"--adjustment"})),
    "nohup": Wrapper(),
    "timeout": Wrapper("sk", frozenset({"--signal", "--kill-after"}), operands=1),
    "stdbuf": Wrapper("ioe", frozenset({"--input", "--output", "--error"})),
    "ionice": Wrapper("cn", frozenset({"--class", "--classdata"}), stops=frozenset({"-p", "-P", "-u"})),
    "setsid": Wrapper(),
    "chrt": Wrapper("TPD", operands=1, stops=frozenset({"-p", "-m", "--pid", "--max"})),
    "taskset": Wrapper(operands=1, stops=frozenset({"-p", "--pid"})),
    "sudo": Wrapper(
        "ugCDhprtTU",
        frozenset({"--user", "--group", "--close-from", "--chdir", "--host", "--prompt", "--role", "--type"}),
        assignments=True,
        stops=frozenset({"-l", "-v", "-V", "-e", "-K", "--list", "--validate", "--version", "--edit"}),
    ),
    "doas": Wrapper("uC"),
    "xargs": Wrapper(
        "adEILnPs",
        frozenset({"--arg-file", "--delimiter", "--max-lines", "--max-args", "--max-procs", "--max-chars"}),
    ),
    "command": Wrapper(stops=frozenset({"-v", "-V"})),
    "builtin": Wrapper(),
    "exec": Wrapper("a"),
    "time": Wrapper("fo", frozenset({"--format", "--output"})),
}
"""Wrappers that run the command written after their own options. `eval` and the shells are read again
as scripts (`shell_script`); `find` runs the commands of its `-exec` actions."""


def commands_run_by(words: list[str]) -> list[list[str]]:
    """Every command `words` starts through wrappers, nearest first, `words` itself left out:
    `sudo -u x nice /usr/bin/git push` → `nice /usr/bin/git push`, `/usr/bin/git push`, `git push`."""
    found: list[list[str]] = []
    todo = [words]
    while todo and len(found) < MAX_LAYERS:
        for inner in _runs(todo.pop(0)):
            found.append(inner)
            todo.append(inner)
    return found[:MAX_LAYERS]


def _runs(words: list[str]) -> list[list[str]]:
    if not words:
        return []
    program = words[0]
    if "/" in program and posixpath.basename(program):
        return [[posixpath.basename(program), *words[1:]]]
    if program == "find":
        return _find_actions(words[1:])
    wrapper = WRAPPERS.get(program)
    if wrapper is None:
        return []
    inner = _after_options(program, words[1:], wrapper)
    return [inner] if inner else []


def _after_options(program: str, args: list[str], wrapper: Wrapper) -> list[str]:
    """The command after a wrapper's options, assignments and operands; [] when it runs none."""
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            i += 1
            break
        if arg in wrapper.stops or arg.split("=", 1)[0] in wrapper.stops:
            return []
        if program == "env" and arg.startswith(("-S", "--split-string")):
            return _split_string(arg, args[i + 1 :])
        if arg == "-" and program == "env":  # `env -`: the old spelling of `env -i`
            i += 1
        elif arg.startswith("--") and len(arg) > 2:
            i += 2 if arg in wrapper.long_valued else 1
        elif arg.startswith("-") and len(arg) > 1:
            i += _short_options(arg, wrapper)
        elif wrapper.assignments and _assignment(arg):
            i += 1
        else:
            break
    return args[i + wrapper.operands :]


def _short_options(arg: str, wrapper: Wrapper) -> int:
    """How many words a cluster like `-iu root` takes: 2 when its last letter wants a value."""
    for at, letter in enumerate(arg[1:], start=1):
        if letter in wrapper.valued:
            return 2 if at == len(arg) - 1 else 1
    return 1


def _split_string(arg: str, rest: list[str]) -> list[str]:
    """`env -S 'git push' x`: the string is split into the command's first words."""
    if arg in ("-S", "--split-string"):  # the string is the next word
        text, rest = (rest[0], rest[1:]) if rest else ("", [])
    else:
        text = arg.removeprefix("--split-string=") if arg.startswith("--") else arg[2:]
    try:
        return [*shlex.split(text), *rest]
    except ValueError:
        return [*text.split(), *rest]


def _find_actions(args: list[str]) -> list[list[str]]:
    """The commands of `find`'s `-exec` / `-execdir` / `-ok` / `-okdir` actions, up to `;` or `+` (the
    line's parser has already taken an unquoted `;` as the end of the command)."""
    found: list[list[str]] = []
    current: list[str] | None = None
    for arg in args:
        if current is None:
            if arg in FIND_ACTIONS:
                current = []
        elif arg in (";", "+"):
            found.append(current)
            current = None
        else:
            current.append(arg)
    if current:
        found.append(current)
    return [c for c in found if c]


def _assignment(word: str) -> bool:
    name, equals, _ = word.partition("=")
    return bool(equals) and name.isidentifier() and name.isascii()


def shell_script(words: list[str], redirects: list[tuple[str, str]]) -> str | None:
    """The script a shell runs: its `-c` string; else, when it names no script file, what its stdin
    holds (a here-string, or a heredoc's body); `eval`'s words joined. None for anything else."""
    if not words:
        return None
    if words[0] == "eval":
        return " ".join(words[1:]) or None
    if posixpath.basename(words[0]) not in SHELLS:
        return None
    reads_stdin, i = False, 1
    while i < len(words) and words[i][:1] in ("-", "+") and words[i] not in ("-", "--"):
        option = words[i]
        if option.startswith("--"):
            i += 2 if option in ("--rcfile", "--init-file") else 1
            continue
        if "c" in option[1:] and option[0] == "-":
            return words[i + 1] if i + 1 < len(words) else None
        reads_stdin = reads_stdin or "s" in option[1:]
        i += 2 if any(letter in _SHELL_VALUED for letter in option[1:]) else 1
    if i < len(words) and words[i] == "--":
        i += 1
    if i < len(words) and words[i] != "-" and not reads_stdin:
        return None  # a script file: what it holds is the sandbox's business
    return next((target for op, target in reversed(redirects) if op in STDIN_SCRIPTS), None)
