"""What an agent may do: the mandatory allow and deny lists and their merge with the user's config, the
path isolation that keeps an agent inside its own worktree (paths resolved through symlinks), and the
PreToolUse decisions built on both. For Bash this is the second line: Claude Code's sandbox holds.

The PreToolUse hooks import this on every tool call of every agent, so it loads nothing beyond the
interpreter's own start-up modules: the rule syntax (worker.permissions.rules), the shell parser
(worker.permissions.shell_words, .bash_reach) and fnmatch are imported inside the functions, only by
the calls that need them.
"""

from __future__ import annotations

from bus.wire.record import Record
from worker.permissions.paths import Unparsable, file_tool_paths, mcp_paths, normalize, resolve

TYPE_CHECKING = False  # typing costs milliseconds on the hooks' path; the checker still sees the types
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence
    from typing import Literal, TypeAlias

    Verdict: TypeAlias = Literal["allow", "deny", "none"]

ROLES = ("manager", "worker")
STATE_DIR = ".ib"
AGENTS_DIR = "agents"
WORKTREE_DIR = "repo"

IB_ALLOW = ("Bash(ib:*)",)
GIT_UNASKED = ("status", "add", "commit", "diff", "show", "log", "ls-files", "grep", "rm", "merge", "rebase")
"""The git subcommands an agent of any program runs without asking (its sandbox holds them in)."""
GIT_ALLOW = tuple(f"Bash(git {sub}:*)" for sub in GIT_UNASKED)
SHELL_ALLOW = tuple(f"Bash({name}:*)" for name in ("pwd", "ls"))
"""No blanket `cat` / `head` / `tail` / `grep`: they read anything; the sandbox decides those."""
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
ENTER_PLAN_MODE = "EnterPlanMode"
MANDATORY_DENY = (ENTER_PLAN_MODE,)
"""An agent does not switch itself into plan mode (a dialog nobody asked for); one started in plan mode
(`ib new-agent --permission-mode plan`) presents its plan with ExitPlanMode, which the person answers."""

FILE_TOOLS = frozenset({"Read", "Write", "Edit", "MultiEdit", "NotebookEdit", "Glob", "Grep", "LS"})
SHARED_PLACES = ("~/.claude", "/tmp")
"""Outside its worktree an agent's file tools may touch only these (and everything below them)."""
SECRET_PLACES = (
    "~/.ssh",
    "~/.aws",
    "~/.gnupg",
    "~/.netrc",
    "~/.git-credentials",
    "~/.config/gh",
    "~/.docker",
    "~/.kube",
    "~/.pypirc",
    "~/.npmrc",
    "~/.ib",
    "/etc/shadow",
)
"""What no command of an agent may read (with the repository's `.env` and `.ib/` outside its worktree)."""
ROOT_SECRETS = (".env", STATE_DIR)

PARAM_CHARS = 300
"""A logged tool parameter longer than this is cut (a Write's content can be megabytes)."""


class Permissions(Record):
    """Claude Code permission rules: what runs without asking, and what never runs; and where the sandbox
    lets Bash commands write besides the worktree (`writable`, from the agent's own sandbox settings;
    None when no sandbox holds them, and then the hook allows what it allows file tools)."""

    __slots__ = ("allow", "deny", "writable")

    def __init__(
        self, allow: tuple[str, ...], deny: tuple[str, ...], writable: tuple[str, ...] | None = None
    ) -> None:
        self.allow, self.deny, self.writable = allow, deny, writable


def sandbox_tmpdir(uid: int) -> str:
    """The temp folder Claude Code's sandbox gives Bash commands (`$TMPDIR`), writable in it: seen with
    2.1.332 as /tmp/claude-<uid>."""
    return f"/tmp/claude-{uid}"


def sandbox_writable(allow_write: Iterable[str], uid: int) -> tuple[str, ...]:
    """Where the sandbox lets Bash commands write besides the worktree: the folders its settings allow
    (`sandbox.filesystem.allowWrite`) and its temp folder. The one list the hook and the sandbox share."""
    return (*allow_write, sandbox_tmpdir(uid))


class Decision(Record):
    """`deny` blocks the tool call with `reason`; `allow` means the path check passed and `none` that
    this module has no opinion. For both, Claude Code's own permission flow still applies."""

    __slots__ = ("reason", "verdict")

    def __init__(self, verdict: Verdict, reason: str = "") -> None:
        self.verdict, self.reason = verdict, reason


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
    from collections.abc import Mapping  # here, not at the top: spawning needs it, the hooks do not

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


# --- paths -----------------------------------------------------------------------------------------

_GLOB_CHARS = "*?["


def _has_glob(text: str) -> bool:
    """Does `text` hold a shell wildcard (`*`, `?` or `[`)?"""
    return any(c in text for c in _GLOB_CHARS)


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
        if not (globs and _has_glob(have) and _expands_to(want, have)):
            return False
    return True


def _expands_to(name: str, pattern: str) -> bool:
    from fnmatch import fnmatchcase  # imports re: only for a path that holds a wildcard

    return fnmatchcase(name, pattern)


class Places(Record):
    """An agent's world, normalised: its worktree, the main repository, home, and where the sandbox lets
    Bash commands write besides the worktree (None: no sandbox; the shared places then)."""

    __slots__ = ("home", "root", "worktree", "writable")

    def __init__(self, worktree: str, root: str, home: str, writable: tuple[str, ...] | None = None) -> None:
        self.worktree, self.root, self.home, self.writable = worktree, root, home, writable

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
    agents = places.agents
    if _under(parts, [*agents, None]):  # first: an agent without a worktree works in the root, not in these
        other = parts[len(agents)]
        if other != places.own_id:
            return "agent", other
    if _under(parts, _parts(places.worktree), globs=False):
        return "worktree", ""
    if _under(parts, _parts(places.root)):
        return "main", ""
    for shared in SHARED_PLACES:
        if _under(parts, _parts(resolve(shared, base="/", home=places.home)), globs=False):
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
    """The agent's PreToolUse verdict: deny-listed tools; file tools and MCP path arguments outside the
    worktree (except ~/.claude and /tmp) or not understood; Bash lines that `cd` into the main repository
    or another agent's folder, write outside the worktree, point git elsewhere or read secrets."""
    writable = permissions.writable
    places = Places(
        resolve(worktree, base="/", home=home),
        resolve(root, base="/", home=home),
        resolve(home, base="/", home="/"),
        None if writable is None else tuple(resolve(p, base="/", home=home) for p in writable),
    )
    denied = _deny_rule(tool_name, tool_input, permissions.deny)
    if denied:
        return denied
    try:
        if tool_name in FILE_TOOLS:
            paths = file_tool_paths(tool_name, tool_input, base=places.worktree, home=places.home)
        elif tool_name.startswith("mcp__"):
            paths = mcp_paths(tool_input, base=places.worktree, home=places.home)
        elif tool_name == "Bash":
            return _bash_decision(tool_input, places)
        else:
            return NO_DECISION
    except Unparsable as e:
        return _deny(
            f"Permission denied: {describe(tool_name, tool_input)}: {e}, so it cannot be checked", places
        )
    return _paths_decision(tool_name, tool_input, paths, places)


def _deny_rule(tool_name: str, tool_input: Mapping[str, object], deny: Sequence[str]) -> Decision | None:
    """A deny rule matching the call; a Bash rule also matches any one command of a compound line. A
    plain tool name is compared here; only other rules load the rule syntax (and, for Bash, the shell
    parser)."""
    inputs: list[Mapping[str, object]] | None = None
    for rule in deny:
        if _plain_name(rule):
            if rule != tool_name:
                continue
        else:
            from worker.permissions.rules import tool_matches

            inputs = _rule_inputs(tool_name, tool_input) if inputs is None else inputs
            if not any(tool_matches(rule, tool_name, one) for one in inputs):
                continue
        what = describe(tool_name, tool_input)
        if tool_name == ENTER_PLAN_MODE:
            return Decision("deny", f"Permission denied: {what}. Agents work directly; plan mode is off.")
        return Decision("deny", f"Permission denied: {what}. It matches the deny rule {rule}.")
    return None


def _plain_name(rule: str) -> bool:
    """A rule that is one tool name and nothing else (no specifier, no blanks, no `mcp__` server
    prefix), which covers exactly the calls of the tool with that name."""
    return rule.isidentifier() and not rule.startswith("mcp__")


def _rule_inputs(tool_name: str, tool_input: Mapping[str, object]) -> list[Mapping[str, object]]:
    """What a rule is matched against: the call, and for Bash each simple command of its line too."""
    inputs: list[Mapping[str, object]] = [tool_input]
    command = tool_input.get("command")
    if tool_name == "Bash" and isinstance(command, str):
        from worker.permissions.shell_words import simple_commands

        inputs += [{"command": " ".join(words)} for words in simple_commands(command)]
    return inputs


def _paths_decision(
    tool_name: str, tool_input: Mapping[str, object], paths: Sequence[str], places: Places
) -> Decision:
    for path in paths:
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
    if not paths:
        return NO_DECISION if tool_name.startswith("mcp__") else Decision("allow", ALLOWED)
    return Decision("allow", ALLOWED)


ALLOWED = "inside the worktree, ~/.claude or /tmp"


def _bash_decision(tool_input: Mapping[str, object], places: Places) -> Decision:
    command = tool_input.get("command")
    if not isinstance(command, str):
        return _deny(f"Permission denied: {describe('Bash', tool_input)}: command is not a string", places)
    from worker.permissions.bash_reach import SINKS, reaches

    variables = {"IB_ROOT": places.root, "IB_AGENT_WORKTREE": places.worktree}
    if places.writable:
        variables["TMPDIR"] = places.writable[-1]  # the sandbox's temp folder (sandbox_writable)
    for reach in reaches(command, cwd=places.worktree, home=places.home, variables=variables):
        if reach.path is None:
            if reach.kind in ("cd", "write", "git"):
                return _deny(
                    f"Path violation: Bash cannot tell where {reach.text!r} leads ({reach.kind})", places
                )
            continue
        path = resolve(reach.path, base="/", home=places.home)
        if reach.kind == "write" and path in SINKS:
            continue
        reason = _bash_reach_problem(reach.kind, path, places)
        if reason:
            return _deny(reason, places)
        if reach.kind == "write" and not _sandbox_writes(path, places):  # /tmp beyond $TMPDIR, ~/.claude
            return Decision("deny", _unwritable(path, places))
    return NO_DECISION


def _sandbox_writes(path: str, places: Places) -> bool:
    """Whether the sandbox lets a Bash command write `path`, of the places the hook lets file tools
    write (the worktree, the shared places); always when no sandbox holds Bash commands."""
    if places.writable is None or where(path, places)[0] != "shared":
        return True
    parts = _parts(path)
    return any(_under(parts, _parts(place), globs=False) for place in places.writable)


def _unwritable(path: str, places: Places) -> str:
    tmpdir = places.writable[-1] if places.writable else ""
    return (
        f"Path violation: Bash tried to write to {path}, where the sandbox lets no command write. Bash "
        f"commands write only in the worktree {places.worktree} and $TMPDIR ({tmpdir})."
    )


def _bash_reach_problem(kind: str, path: str, places: Places) -> str | None:
    place, other = where(path, places)
    where_text = "main repo" if place == "main" else f"{_agent(other)} folder" if place == "agent" else ""
    if kind == "cd":
        return f"Path violation: Bash tried to cd into {where_text}: {path}" if where_text else None
    if kind == "read":
        if place == "agent":
            return f"Path violation: Bash tried to read {where_text}: {path}"
        return f"Path violation: Bash tried to read a secret: {path}" if secret(path, places) else None
    if place in ("worktree", "shared"):
        return None
    action = "write to" if kind == "write" else "run git in"
    return f"Path violation: Bash tried to {action} {where_text or 'a path outside the worktree'}: {path}"


def secret(path: str, places: Places) -> bool:
    """Is `path` one of the places no command of an agent may read: the home's credentials, the
    repository's `.env` and its `.ib/` state (the agent's own worktree aside), any process's environ?"""
    parts = _parts(path)
    if where(path, places)[0] == "worktree":
        return False
    if _under(parts, ["proc", None, "environ"]):
        return True
    root = _parts(places.root)
    if any(_under(parts, [*root, name], globs=False) for name in ROOT_SECRETS):
        return True
    return any(
        _under(parts, _parts(resolve(p, base="/", home=places.home)), globs=False) for p in SECRET_PLACES
    )


def _deny(what: str, places: Places) -> Decision:
    return Decision(
        "deny", f"{what}. An agent works only in its worktree {places.worktree} (and ~/.claude, /tmp)."
    )


def _agent(agent_id: str) -> str:
    """`agent b2's`; a glob in that place (`*`) could be any agent."""
    return "another agent's" if _has_glob(agent_id) else f"agent {agent_id}'s"


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
    from worker.permissions.shell_words import cd_targets

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
