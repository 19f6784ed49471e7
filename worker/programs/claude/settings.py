"""The Claude Code settings an agent is started with: its permission mode, its merged permission rules
and our hooks (SessionStart, PreToolUse, Stop, and the state hooks of `ib hook event`). Pure: the caller
writes the dict to the agent's settings.json.
"""

from __future__ import annotations

import shlex

from bus.permission_modes import DEFAULT_PERMISSION_MODE
from worker.errors import WorkerError
from worker.permissions.policy import ROLES, Permissions

HOOK_TIMEOUT = 10
"""Seconds Claude Code gives one of our hook commands before it cancels it."""

AGENT_HOOKS = (
    ("SessionStart", "session-start"),
    ("PreToolUse", "pre-tool-use"),
    ("Stop", "stop"),
    ("Notification", "event"),
    ("PermissionRequest", "event"),
    ("StopFailure", "event"),
    ("SessionEnd", "event"),
    ("PreCompact", "event"),
    ("UserPromptSubmit", "event"),
    ("PostToolUse", "changes"),
)
"""(Claude Code event, `ib hook` name). Every Notification type is taken (unknown ones are kept as
`notification` events); PostToolUse runs after the tools that may change files (`MATCHERS`): the conflict
check (worker.hooks.changes)."""

MATCHERS = {"changes": "Write|Edit|MultiEdit|NotebookEdit|Bash"}
"""Claude Code matchers of the hooks that run for some tools only (the same list as
worker.hooks.changes.CHANGING_TOOLS; a test keeps them equal)."""


def hook_command(ib_command: str, hook: str) -> str:
    """The shell command Claude Code runs for one of our hooks: `'<ib>' hook <name>`."""
    return f"{shlex.quote(ib_command)} hook {hook}"


def hook_entry(ib_command: str, hook: str, matcher: str = "") -> dict[str, object]:
    """One matcher group of Claude Code's `hooks` schema holding one command hook."""
    return {
        "matcher": matcher,
        "hooks": [{"type": "command", "command": hook_command(ib_command, hook), "timeout": HOOK_TIMEOUT}],
    }


def build_agent_settings(
    role: str,
    permissions: Permissions,
    ib_command: str,
    lacking: tuple[str, ...] = (),
    mode: str = DEFAULT_PERMISSION_MODE,
) -> dict[str, object]:
    """Settings JSON for one agent. `ib_command` is the absolute path of the `ib` executable; it is
    quoted for sh here; `lacking` are the events the agent's Claude Code does not have (left out); `mode`
    is its permission mode: settings given with --settings outrank the user's and the project's, so
    their `defaultMode` cannot change it; in any other mode auto mode is off, so no dialog offers to
    switch to it; asking for bypassPermissions accepts the warning Claude Code would stop at. Raises
    WorkerError for an unknown role or a relative `ib` path."""
    if role not in ROLES:
        raise WorkerError(f"unknown agent role {role!r}: use one of {', '.join(ROLES)}")
    if not ib_command.startswith("/"):
        raise WorkerError(f"the ib command must be an absolute path, got {ib_command!r}")
    accepted = {"skipDangerousModePermissionPrompt": True} if mode == "bypassPermissions" else {}
    return {
        **accepted,
        "permissions": {
            "defaultMode": mode,
            **({} if mode == "auto" else {"disableAutoMode": "disable"}),
            "allow": list(permissions.allow),
            "deny": list(permissions.deny),
        },
        "hooks": {
            event: [hook_entry(ib_command, hook, MATCHERS.get(hook, ""))]
            for event, hook in AGENT_HOOKS
            if event not in lacking
        },
    }
