"""What an agent may do: the mandatory allow and deny lists, their merge with the user's config, Claude
Code's permission rule syntax, and the path isolation that keeps an agent inside its own worktree.

Pure and stdlib-only: the PreToolUse hooks import this on every tool call of every agent.
"""

from __future__ import annotations

import fnmatch
import posixpath
import re
import shlex
from collections.abc import Iterator, Mapping, Sequence
from typing import Literal, NamedTuple

ROLES = ("manager", "worker")
STATE_DIR = ".ib"
AGENTS_DIR = "agents"
WORKTREE_DIR = "repo"

IB_ALLOW = ("Bash(ib:*)",)
GIT_ALLOW = tuple(
    f"Bash(git {sub}:*)"
    for sub in ("status", "add", "commit", "diff", "show", "log", "ls-files", "grep", "rm", "merge", "rebase")
)
SHELL_ALLOW = tuple(f"Bash({name}:*)" for name in ("pwd", "ls", "head", "tail", "cat", "grep"))
FILE_TOOLS_ALLOW = ("Read", "Write", "Edit", "MultiEdit", "Glob", "Grep", "LS")
OTHER_ALLOW = (
    "TodoWrite",
    "Task",
    "TaskOutput",
    "KillShell",
    "NotebookEdit",
    "WebFetch",
    "WebSearch",
    "AskUserQuestion",
)
PLAN_TOOLS = ("EnterPlanMode", "ExitPlanMode")
MANDATORY_DENY = PLAN_TOOLS

FILE_TOOLS = frozenset({"Read", "Write", "Edit", "MultiEdit", "NotebookEdit", "Glob", "Grep", "LS"})
PATH_KEYS = ("file_path", "notebook_path", "path")
SHARED_PLACES = ("~/.claude", "/tmp")
"""Outside its worktree an agent's file tools may touch only these (and everything below them)."""

PARAM_CHARS = 300
"""A logged tool parameter longer than this is cut (a Write's content can be megabytes)."""

Verdict = Literal["allow", "deny", "none"]


class Permissions(NamedTuple):
    """Claude Code permission rules: what runs without asking, and what never runs."""

    allow: tuple[str, ...]
    deny: tuple[str, ...]


class Decision(NamedTuple):
    """`deny` blocks the tool call with `reason`; `allow` means the path check passed and `none` that
    this module has no opinion. For both, Claude Code's own permission flow still applies."""

    verdict: Verdict
    reason: str = ""


NO_DECISION = Decision("none")


# --- the lists -------------------------------------------------------------------------------------


def mandatory_allow(ib_path: str | None = None) -> tuple[str, ...]:
    """The rules every agent gets; `ib_path` (the absolute `ib`) is allowed next to a bare `ib`."""
    ib = (*IB_ALLOW, f"Bash({ib_path}:*)") if ib_path else IB_ALLOW
    return (*ib, *GIT_ALLOW, *SHELL_ALLOW, *FILE_TOOLS_ALLOW, *OTHER_ALLOW)


def merge_permissions(
    role: str,
    project_cfg: Mapping[str, object] | None,
    user_cfg: Mapping[str, object] | None,
    *,
    ib_path: str | None = None,
) -> Permissions:
    """The mandatory rules plus `permissions.<role>.allow/deny` from the config files. Per key (allow,
    deny) the project's list wins when it has one, else the user's. Bad shapes raise
    PermissionsConfigError naming the key and the file."""
    if role not in ROLES:
        from worker.errors import PermissionsConfigError

        raise PermissionsConfigError(f"unknown agent role {role!r}: use one of {', '.join(ROLES)}")
    lists: dict[str, list[str]] = {}
    for key in ("allow", "deny"):
        project = _configured(project_cfg, role, key, "project config (.ib/config.json)")
        user = _configured(user_cfg, role, key, "user config (~/.ib/config.json)")
        lists[key] = project if project is not None else (user or [])
    return Permissions(
        allow=_unique([*mandatory_allow(ib_path), *lists["allow"]]),
        deny=_unique([*MANDATORY_DENY, *lists["deny"]]),
    )


def _configured(cfg: Mapping[str, object] | None, role: str, key: str, where: str) -> list[str] | None:
    """`cfg["permissions"][role][key]` as a list of rules; None when a level is absent."""
    value: object = cfg
    for level in ("permissions", role, key):
        if value is None:
            return None
        if not isinstance(value, Mapping):
            raise _bad_config(role, key, where)
        value = value.get(level)
    if value is None:
        return None
    if not (isinstance(value, list) and all(isinstance(rule, str) for rule in value)):
        raise _bad_config(role, key, where)
    return [rule.strip() for rule in value if rule.strip()]


def _bad_config(role: str, key: str, where: str) -> Exception:
    from worker.errors import PermissionsConfigError

    return PermissionsConfigError(
        f"bad permissions.{role}.{key} in the {where}: expected a list of rule strings inside objects, "
        f'like {{"permissions": {{"{role}": {{"{key}": ["Bash(npm test:*)"]}}}}}}; fix the file'
    )


def _unique(rules: Sequence[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(rules))


# --- rule syntax -----------------------------------------------------------------------------------

_RULE = re.compile(r"\s*([^()\s]+)\s*(?:\((.*)\))?\s*", re.DOTALL)
_SUBJECT_KEYS = (*PATH_KEYS, "pattern", "url", "query")


def tool_matches(pattern: str, tool_name: str, tool_input: Mapping[str, object]) -> bool:
    """Does a Claude Code permission rule cover this call? `Read` covers every Read; `Bash(git status:*)`
    and `Bash(git status *)` cover `git status` and `git status <anything>`; `Bash(npm test)` only that
    exact command; `*` inside a specifier is a wildcard; `WebFetch(domain:example.com)` covers the host
    and its subdomains; other specifiers are globs over the tool's path (or pattern, url, query)."""
    rule = _RULE.fullmatch(pattern)
    if not rule:
        return False
    name, spec = rule.group(1), rule.group(2)
    if not _name_matches(name, tool_name):
        return False
    if spec is None or spec.strip() in ("", "*"):
        return True
    return _spec_matches(spec.strip(), tool_name, tool_input)


def _spec_matches(spec: str, tool_name: str, tool_input: Mapping[str, object]) -> bool:
    if tool_name == "Bash":
        command = tool_input.get("command")
        return isinstance(command, str) and command_matches(spec, command)
    subject = next((v for k in _SUBJECT_KEYS if isinstance(v := tool_input.get(k), str) and v), None)
    if subject is None:
        return False
    if tool_name == "WebFetch" and spec.startswith("domain:"):
        host = _host(subject)
        domain = spec.removeprefix("domain:").lower()
        return host == domain or host.endswith("." + domain)
    return _glob_regex(spec, path=True).fullmatch(subject) is not None


def _name_matches(name: str, tool_name: str) -> bool:
    if name == tool_name:
        return True
    if name.startswith("mcp__"):  # `mcp__server` and `mcp__server__*` cover every tool of that server
        server = name.removesuffix("__*").removesuffix("*")
        return tool_name.startswith(server.rstrip("_") + "__")
    return False


def command_matches(spec: str, command: str) -> bool:
    """A Bash specifier against one command line (surrounding blanks ignored)."""
    command = command.strip()
    if spec.endswith(":*"):
        spec = spec[:-2] + " *"
    if "*" not in spec:
        return command == spec
    return _glob_regex(spec, path=False).fullmatch(command) is not None


def _glob_regex(spec: str, *, path: bool) -> re.Pattern[str]:
    """`*` as a wildcard; for commands a trailing ` *` also matches nothing (word boundary), for paths
    a single `*` stays inside one folder and `**` crosses folders."""
    if not path and spec.endswith(" *"):
        return re.compile(_glob_body(spec[:-2], path) + r"(?:\s.*)?", re.DOTALL)
    return re.compile(_glob_body(spec, path), re.DOTALL)


def _glob_body(spec: str, path: bool) -> str:
    parts = re.split(r"(\*\*|\*)", spec)
    out = []
    for part in parts:
        if part == "**":
            out.append(".*")
        elif part == "*":
            out.append("[^/]*" if path else ".*")
        else:
            out.append(re.escape(part))
    return "".join(out)


def _host(url: str) -> str:
    rest = url.split("://", 1)[-1]
    host = re.split(r"[/?#]", rest, maxsplit=1)[0].rsplit("@", 1)[-1]
    return host.split(":", 1)[0].lower()


# --- shell commands --------------------------------------------------------------------------------

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


# --- paths -----------------------------------------------------------------------------------------

_GLOB_CHARS = re.compile(r"[*?\[]")


def normalize(path: str, *, base: str, home: str) -> str:
    """`path` as an absolute path without `.`, `..` or doubled slashes; `~` is `home`, a relative path
    is taken from `base`. Symlinks are not followed (no file system access)."""
    if path == "~" or path.startswith("~/"):
        path = home + path[1:]
    if not path.startswith("/"):
        path = posixpath.join(base, path)
    path = posixpath.normpath(path)
    return "/" + path.lstrip("/")


def _parts(path: str) -> list[str]:
    return [p for p in path.split("/") if p]


def _under(path: Sequence[str], base: Sequence[str | None], *, globs: bool = True) -> bool:
    """Is `path` (parts) `base` or below it? None in `base` is any one part; with `globs`, a part of
    `path` holding `*`, `?` or `[` matches what it could expand to."""
    if len(path) < len(base):
        return False
    for have, want in zip(path, base, strict=False):
        if want is None or have == want:
            continue
        if not (globs and _GLOB_CHARS.search(have) and fnmatch.fnmatchcase(want, have)):
            return False
    return True


class Places(NamedTuple):
    """An agent's world, normalised: its worktree, the main repository, home."""

    worktree: str
    root: str
    home: str

    @property
    def agents(self) -> list[str]:
        return [*_parts(self.root), STATE_DIR, AGENTS_DIR]

    @property
    def own_id(self) -> str | None:
        parts = _parts(self.worktree)
        agents = self.agents
        if len(parts) == len(agents) + 2 and parts[: len(agents)] == agents and parts[-1] == WORKTREE_DIR:
            return parts[-2]
        return None


def where(path: str, places: Places) -> tuple[str, str]:
    """Which place an absolute normalised path lies in: ("worktree", ""), ("agent", <id>),
    ("main", ""), ("shared", "") or ("outside", "")."""
    parts = _parts(path)
    if _under(parts, _parts(places.worktree), globs=False):
        return "worktree", ""
    agents = places.agents
    if _under(parts, [*agents, None]):
        other = parts[len(agents)]
        if other != places.own_id:
            return "agent", other
    if _under(parts, _parts(places.root)):
        return "main", ""
    for shared in SHARED_PLACES:
        if _under(parts, _parts(normalize(shared, base="/", home=places.home)), globs=False):
            return "shared", ""
    return "outside", ""


# --- decisions -------------------------------------------------------------------------------------


def decide(
    tool_name: str,
    tool_input: Mapping[str, object],
    *,
    worktree: str,
    root: str,
    permissions: Permissions,
    home: str,
) -> Decision:
    """The agent's PreToolUse verdict: deny-listed tools, file tools outside the worktree (except
    ~/.claude and /tmp) and `cd` into the main repository or another agent's folder are denied."""
    places = Places(
        normalize(worktree, base="/", home=home),
        normalize(root, base="/", home=home),
        normalize(home, base="/", home="/"),
    )
    denied = _deny_rule(tool_name, tool_input, permissions.deny)
    if denied:
        return denied
    if tool_name in FILE_TOOLS:
        return _file_decision(tool_name, tool_input, places)
    if tool_name == "Bash":
        return _bash_decision(tool_input, places)
    return NO_DECISION


def _deny_rule(tool_name: str, tool_input: Mapping[str, object], deny: Sequence[str]) -> Decision | None:
    """A deny rule matching the call; a Bash rule also matches any one command of a compound line."""
    inputs: list[Mapping[str, object]] = [tool_input]
    command = tool_input.get("command")
    if tool_name == "Bash" and isinstance(command, str):
        inputs += [{"command": " ".join(words)} for words in simple_commands(command)]
    for rule in deny:
        if any(tool_matches(rule, tool_name, one) for one in inputs):
            what = describe(tool_name, tool_input)
            if tool_name in PLAN_TOOLS:
                return Decision("deny", f"Permission denied: {what}. Agents work directly; plan mode is off.")
            return Decision("deny", f"Permission denied: {what}. It matches the deny rule {rule}.")
    return None


def _file_decision(tool_name: str, tool_input: Mapping[str, object], places: Places) -> Decision:
    for path in tool_paths(tool_name, tool_input, worktree=places.worktree, home=places.home):
        place, other = where(path, places)
        if place in ("worktree", "shared"):
            continue
        if place == "main":
            return _deny(f"Path violation: {tool_name} tried to access main repo: {path}", places)
        if place == "agent":
            return _deny(
                f"Path violation: {tool_name} tried to access {_agent(other)} folder: {path}", places
            )
        return _deny(f"Permission denied: {describe(tool_name, tool_input)}", places)
    return Decision("allow", "inside the worktree, ~/.claude or /tmp")


def _bash_decision(tool_input: Mapping[str, object], places: Places) -> Decision:
    command = tool_input.get("command")
    if not isinstance(command, str):
        return NO_DECISION
    variables = {"IB_ROOT": places.root}
    for target in cd_targets(command, cwd=places.worktree, home=places.home, variables=variables):
        place, other = where(target, places)
        if place == "main":
            return _deny(f"Path violation: Bash tried to cd into main repo: {target}", places)
        if place == "agent":
            return _deny(f"Path violation: Bash tried to cd into {_agent(other)} folder: {target}", places)
    return NO_DECISION


def _deny(what: str, places: Places) -> Decision:
    return Decision(
        "deny", f"{what}. An agent works only in its worktree {places.worktree} (and ~/.claude, /tmp)."
    )


def _agent(agent_id: str) -> str:
    """`agent b2's`; a glob in that place (`*`) could be any agent."""
    return "another agent's" if _GLOB_CHARS.search(agent_id) else f"agent {agent_id}'s"


def tool_paths(tool_name: str, tool_input: Mapping[str, object], *, worktree: str, home: str) -> list[str]:
    """The normalised paths a file tool would touch: its path parameters and, for Glob, its pattern."""
    paths = [
        normalize(value, base=worktree, home=home)
        for key in PATH_KEYS
        if isinstance(value := tool_input.get(key), str) and value
    ]
    pattern = tool_input.get("pattern")
    if tool_name == "Glob" and isinstance(pattern, str) and pattern:
        paths.append(normalize(pattern, base=paths[0] if paths else worktree, home=home))
    return paths


def describe(tool_name: str, tool_input: Mapping[str, object]) -> str:
    """`Read (file_path: /etc/passwd)`: the tool and its parameters on one line, long values cut."""
    params = ", ".join(f"{key}: {_one_line(value)}" for key, value in tool_input.items())
    return f"{tool_name} ({params})" if params else tool_name


def _one_line(value: object) -> str:
    text = value if isinstance(value, str) else repr(value)
    text = text.replace("\r", "\\r").replace("\n", "\\n")
    return text if len(text) <= PARAM_CHARS else text[:PARAM_CHARS] + "…"


# --- the primary session ---------------------------------------------------------------------------


def decide_primary(
    tool_name: str, tool_input: Mapping[str, object], *, cwd: str, root: str, home: str
) -> Decision:
    """The main repository's own Claude: only `cd` / `pushd` into an agent's worktree is denied."""
    command = tool_input.get("command")
    if tool_name != "Bash" or not isinstance(command, str):
        return NO_DECISION
    root = normalize(root, base="/", home=home)
    agents = [*_parts(root), STATE_DIR, AGENTS_DIR]
    for target in cd_targets(
        command, cwd=normalize(cwd, base=root, home=home), home=home, variables={"IB_ROOT": root}
    ):
        parts = _parts(target)
        if _under(parts, [*agents, None, WORKTREE_DIR]):
            return Decision(
                "deny",
                f"Path violation: Bash tried to cd into {_agent(parts[len(agents)])} worktree: {target}. "
                "The main session stays in the main repository; use `ib` commands (or read the files "
                "by path) instead.",
            )
    return NO_DECISION
