"""The Claude Code settings an agent is started with: its permission mode, its merged permission rules
and our hooks (SessionStart, PreToolUse, Stop, and the state hooks of `ib hook event`). Pure: the caller
writes the dict to the agent's settings.json.
"""

from __future__ import annotations

import json
import os
import shlex
from collections.abc import Iterator

from bus.errors import ConfigError
from bus.settings.permission_modes import DEFAULT_PERMISSION_MODE
from bus.settings.settings_file import read_text
from worker.errors import WorkerError
from worker.permissions.policy import ROLES, Permissions
from worker.programs.mcp_registration import ALLOW_RULE

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
            "allow": [*permissions.allow, *([ALLOW_RULE] if role == "manager" else [])],  # its ib mcp
            "deny": list(permissions.deny),
        },
        "hooks": {
            event: [hook_entry(ib_command, hook, MATCHERS.get(hook, ""))]
            for event, hook in AGENT_HOOKS
            if event not in lacking
        },
    }


def persons_settings(root: str, home: str) -> Iterator[tuple[str, dict[str, object]]]:
    """(file, settings) of the person's own Claude Code settings, as Claude Code ranks them: the
    repository's local settings, then its shared ones, then the user's. Unreadable files are left out."""
    for path in (
        os.path.join(root, ".claude", "settings.local.json"),
        os.path.join(root, ".claude", "settings.json"),
        os.path.join(home, ".claude", "settings.json"),
    ):
        try:  # through the settings-file reader: a FIFO or a device there never blocks a spawn
            text = read_text(path)
            found = json.loads(text) if text else None
        except (ConfigError, ValueError):
            continue
        if isinstance(found, dict):
            yield path, found


def persons_default_mode(root: str, home: str) -> tuple[str, str] | None:
    """The `permissions.defaultMode` the person set for their own sessions and the file it is in; None
    when none sets one. Agents start in ittybus's mode instead, which outranks it."""
    for path, found in persons_settings(root, home):
        permissions = found.get("permissions")
        mode = permissions.get("defaultMode") if isinstance(permissions, dict) else None
        if isinstance(mode, str) and mode:
            return mode, path
    return None


INBOUND_SETTING = "crossSessionInbound"
"""Claude Code's setting (2.1.332) for messages from other sessions: `accept` delivers them, `hold`
parks them for the person, `refuse` turns them away; unset, a session in bypassPermissions holds a
message whose sender names no permission mode, which is what ittybus's are."""


def persons_inbound(root: str, home: str) -> tuple[str, str] | None:
    """The `crossSessionInbound` that holds for the person's sessions here and the file it is in; None
    when none sets it. A repository's files may only tighten it (Claude Code ignores their `accept`), so
    `accept` counts from the user's own settings only."""
    user_file = os.path.join(home, ".claude", "settings.json")
    for path, found in persons_settings(root, home):
        value = found.get(INBOUND_SETTING)
        if isinstance(value, str) and value and (value != "accept" or path == user_file):
            return value, path
    return None
