"""The boundary applied: every command of the `ib` application, when an agent runs it, goes through
`rules.decide` and has its path arguments confined before its body runs; the worker checks the commands
it gets over the bus from an agent the same way (`check_command`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from typer._click.core import Command, Context, ParameterSource  # typer vendors click
from typer._click.globals import get_current_context
from typer.core import TyperGroup

from bus.commands import worker_commands as cmd
from bus.errors import BusError
from bus.settings.repo_paths import agent_from_path
from worker.boundary.identity import AgentCaller
from worker.boundary.paths import READ, WRITE, confined
from worker.boundary.rules import AGENT_ID, Request, decide
from worker.errors import WorkerError

if TYPE_CHECKING:
    from bus.stores.agent_store import AgentStore

ManagerOf = Callable[[str], "str | None"]
"""An agent's manager (`""` for a top agent), or None when there is no such agent."""

PATH_PARAMETERS = {"body_file": READ, "prompt_file": READ, "png": WRITE, "file": WRITE, "source": READ}
"""Every parameter of the CLI that names a file, and how the command uses it."""
ACTING_PARAMETERS = ("as_agent", "sender", "agent", "manager")
"""Parameters that say for which agent a command acts (`--as`, `--from`, `--agent`, `--manager`)."""
_PATHLIKE = ("file", "path", "dir", "png", "folder")

RULE_OF: dict[type[cmd.Command], str] = {
    cmd.NewAgent: "new-agent",
    cmd.Send: "send",
    cmd.PressKeys: "esc",
    cmd.Look: "look",
    cmd.TakeScreenshot: "look",
    cmd.Kill: "kill",
    cmd.Merge: "merge",
    cmd.QueueMerge: "merge",
    cmd.MergeCheck: "merge-check",
    cmd.Pause: "pause",
    cmd.Resume: "resume",
    cmd.Diff: "diff",
    cmd.DiffReview: "diff",
    cmd.Status: "status",
}
"""A worker command's type → the CLI command the allow-list knows it by; others are refused to agents."""


class Refused(WorkerError):
    """An agent asked `ib` for something outside its allow-list."""


def install(root: Command, caller: AgentCaller, cwd: str, manager_of: ManagerOf) -> None:
    """Wrap the body of every command below `root` in the agent's check."""
    if isinstance(root, TyperGroup):
        for sub in root.commands.values():
            install(sub, caller, cwd, manager_of)
    elif root.callback is not None:  # a command made once per process may be guarded again: its own body
        body = getattr(root.callback, "unguarded", root.callback)
        root.callback = _guarded(body, caller, cwd, manager_of)


def _guarded(
    body: Callable[..., Any], caller: AgentCaller, cwd: str, manager_of: ManagerOf
) -> Callable[..., Any]:
    def checked(**params: Any) -> Any:
        ctx = get_current_context()
        name = ctx.command_path.partition(" ")[2]
        check(caller, cwd, request_of(ctx, name, params, manager_of, caller.id))
        return body(**_confine_paths(ctx, name, params, caller))

    checked.unguarded = body  # type: ignore[attr-defined]
    return checked


def check(caller: AgentCaller, cwd: str, request: Request) -> None:
    """Refused with the one-line reason unless `caller` may run `request` from `cwd`."""
    verdict = decide(caller.role, caller.id, request)
    if not verdict.allowed:
        raise Refused(verdict.why)
    here = agent_from_path(cwd)
    if here is not None and here != caller.id:
        raise Refused(f"agent {caller.id} may not run ib in agent {here}'s worktree")


def request_of(
    ctx: Context, name: str, params: dict[str, Any], manager_of: ManagerOf, caller: str
) -> Request:
    target = params.get("agent_id")
    acting = next((params[p] for p in ACTING_PARAMETERS if params.get(p)), None)
    given = frozenset(
        param.opts[0]
        for param in ctx.command.params
        if param.name and ctx.get_parameter_source(param.name) is ParameterSource.COMMANDLINE
    )
    return named_request(name, target, acting, given, manager_of, caller)


def named_request(
    name: str,
    target: str | None,
    acting: str | None,
    options: frozenset[str],
    manager_of: ManagerOf,
    caller: str,
) -> Request:
    """The allow-list's view of `ib <name>` for `target`, acting as `acting`, with these options given (the
    CLI's and `ib mcp`'s tools, which name the command they stand for)."""
    return Request(
        name, target, acting, options, _manager(target, manager_of), _manager(caller, manager_of) or ""
    )


def manager_in(agents: AgentStore, agent_id: str) -> str | None:
    """A `ManagerOf` over the agents' store: None for no such agent, or when the bus cannot say."""
    try:
        agent = agents.find(agent_id)
    except (BusError, WorkerError, ValueError):
        return None
    return agent.manager if agent is not None else None


def _confine_paths(ctx: Context, name: str, params: dict[str, Any], caller: AgentCaller) -> dict[str, Any]:
    confined_params = dict(params)
    for param in ctx.command.params:
        value = params.get(param.name or "")
        if not param.name or value in (None, "-", False) or not isinstance(value, str):
            continue
        option = param.opts[0]
        mode = PATH_PARAMETERS.get(param.name)
        if mode is None and any(word in param.name for word in _PATHLIKE):
            raise Refused(f"agent {caller.id} may not give {option} to `ib {name}`: a path ib does not check")
        if mode is not None:
            confined_params[param.name] = confined(option, value, caller.worktree, mode)
    return confined_params


def command_request(command: cmd.Command, sender: str, manager_of: ManagerOf) -> Request:
    """The allow-list's view of a command that came over the bus."""
    name = RULE_OF.get(type(command), f"{command.op} (over the bus)")
    target = command.routing_id() if command.routed_by == "agent" else None
    options: set[str] = set()
    acting = getattr(command, "sender", None)
    if getattr(command, "into", None):
        options.add("--into")
    if isinstance(command, cmd.NewAgent):
        acting = command.manager or command.caller
        options |= {"--no-worktree"} if command.no_worktree else set()
    return Request(
        name,
        target,
        acting,
        frozenset(options),
        _manager(target, manager_of),
        _manager(sender, manager_of) or "",
    )


def _manager(target: str | None, manager_of: ManagerOf) -> str | None:
    return manager_of(target) if target and AGENT_ID.fullmatch(target) else None


def check_command(command: cmd.Command, sender: str, role: str | None, manager_of: ManagerOf) -> None:
    """The worker's own check of a command an agent sent (`role` None: the sender is no agent).

    It can check what the named sender may do; it cannot prove the sender is who the entry says."""
    if role is None:
        return
    verdict = decide(role, sender, command_request(command, sender, manager_of))
    if not verdict.allowed:
        raise Refused(verdict.why)
