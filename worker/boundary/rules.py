"""What an agent may ask of `ib`: a short allow-list per role, and the one decision every command of an
agent goes through. Pure: the caller's role and id, the command, the agent it names and that agent's
manager in, allowed or a one-line reason out. A person is never asked about: this is for agents only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

AGENT_ID = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")  # bus.wire.ids: what an agent id may look like

SELF = "self"
"""The command acts on the caller alone (any agent id it names must be the caller's)."""
READ = "read"
"""A view that names no agent and shows no secret."""
CHILD = "child"
"""The command acts on one agent, which must be a child of the caller."""
SPAWN = "spawn"
"""The command starts a child of the caller."""
VIEW = "view"
"""A read-only view of one agent: the caller itself, or one of its children."""
MESSAGE = "message"
"""A message: to the person (`user`), to the caller's own manager, or to one of its children."""
PERSON = "user"

ANY_AGENT: dict[str, str] = {
    "notify": SELF,
    "ask": SELF,
    "log": SELF,
    "task claim": SELF,
    "task done": SELF,
    "task fail": SELF,
    "task show": READ,
    "task list": READ,
    "task tree": READ,
    "list": READ,
    "tree": READ,
    "info": VIEW,
    "status": VIEW,
    "diff": VIEW,
    "look": VIEW,
    "send": MESSAGE,
}
"""Every agent: report about itself, write to the person and its manager, hold its own task, read the task
board and the agent list, look at its own work."""
MANAGER: dict[str, str] = {
    **ANY_AGENT,
    "new-agent": SPAWN,
    "task add": READ,
    "esc": CHILD,
    "pause": CHILD,
    "resume": CHILD,
    "kill": CHILD,
    "merge": CHILD,
    "merge-check": CHILD,
}
"""A manager, in addition: add tasks, spawn children, and talk to, look at, stop and merge its own."""
ALLOWED = {"manager": MANAGER, "worker": ANY_AGENT}

PERSONS_SETUP = frozenset(
    {"hooks", "status-node", "up", "down", "bus", "config", "worker", "bot", "nuke", "spool", "listen"}
)
"""Commands that change the person's own set-up (the first word): never from inside an agent."""
RUNS_CODE = frozenset({"--test-cmd"})
"""Options whose value the worker or `ib task done` runs as a shell command: only from a person."""
OPTIONS_REFUSED = {
    "new-agent": {
        "--no-worktree": "its child would write the person's checkout",
        "--on": "an agent starts children on its own machine only",
    },
    "merge": {"--into": "a child's work goes into the branch it started from (its manager's)"},
}
"""Options an agent may not give to a command it may run, and why."""


@dataclass(frozen=True)
class Verdict:
    allowed: bool
    why: str = ""


@dataclass(frozen=True)
class Request:
    """One command of an agent: its name (`kill`, `task done`), the agent it acts on, the agent id given
    in an option that says for whom it acts (`--as`, `--from`, `--agent`, `--manager`), the options
    given, the target's manager (`""` for a top agent, None when there is no such agent), and the
    caller's own manager."""

    command: str
    target: str | None = None
    acting_as: str | None = None
    options: frozenset[str] = field(default_factory=frozenset)
    target_manager: str | None = None
    caller_manager: str = ""


def decide(role: str, caller: str, request: Request) -> Verdict:
    """Whether agent `caller` (of `role`) may run `request`; the reason in one line when not."""
    refusal = _refusal(role, caller, request)
    if refusal:
        return Verdict(False, f"agent {caller} may not {refusal}")
    head = request.command.split(" ", 1)[0]
    kind = SELF if head == "hook" else ALLOWED.get(role, ANY_AGENT)[request.command]
    named = request.acting_as or request.target if kind == SELF else request.acting_as
    if kind == SPAWN:
        return _spawn(caller, request)
    if kind == VIEW and request.target == caller:
        return _self_only(caller, request, request.acting_as)
    if kind == MESSAGE and request.target in (PERSON, request.caller_manager or PERSON):
        return _self_only(caller, request, request.acting_as)
    if kind in (CHILD, VIEW, MESSAGE):
        return _child(caller, request)
    return _self_only(caller, request, named)


def _refusal(role: str, caller: str, request: Request) -> str:
    """Why the command is refused whoever it names ("" when that depends on the agent it names)."""
    command, head = request.command, request.command.split(" ", 1)[0]
    if head == "hook":  # Claude Code runs the agent's hooks: they report about the agent itself
        return ""
    if head in PERSONS_SETUP:
        return f"run `ib {command}`: it changes the person's own set-up"
    code = sorted(request.options & RUNS_CODE)
    if code:
        return f"give {code[0]}: only the person sets code that ib runs"
    if command not in ALLOWED.get(role, ANY_AGENT):
        return f"run `ib {command}`: not in what a {role} agent may do (README: what ib may do in an agent)"
    for option, why in OPTIONS_REFUSED.get(command, {}).items():
        if option in request.options:
            return f"give {option} to `ib {command}`: {why}"
    return ""


def _self_only(caller: str, request: Request, named: str | None) -> Verdict:
    if named is None or named == caller:
        return Verdict(True)
    return Verdict(
        False, f"agent {caller} may not run `ib {request.command}` for {named!r} (only for itself)"
    )


def _spawn(caller: str, request: Request) -> Verdict:
    if request.acting_as not in (None, caller):
        return Verdict(
            False, f"agent {caller} may not start an agent for manager {request.acting_as!r} (only its own)"
        )
    return _self_only(caller, request, None)


def _child(caller: str, request: Request) -> Verdict:
    target, command = request.target, request.command
    if request.acting_as not in (None, caller):
        return Verdict(False, f"agent {caller} may not run `ib {command}` as {request.acting_as!r}")
    if target is None:
        return Verdict(False, f"agent {caller} must name which of its children `ib {command}` is for")
    if not AGENT_ID.fullmatch(target):
        return Verdict(False, f"agent {caller} may not `ib {command}` {target!r}: not an agent id")
    if request.target_manager is None:
        return Verdict(False, f"agent {caller} may not {command} {target} (no such agent)")
    if request.target_manager != caller:
        return Verdict(False, f"agent {caller} may not {command} {target} (not its child)")
    return Verdict(True)
