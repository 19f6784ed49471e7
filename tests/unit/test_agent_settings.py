"""The settings an agent starts with: merged permissions and our hooks in Claude Code's schema."""

from __future__ import annotations

import json
import shlex

import pytest

from worker.errors import WorkerError
from worker.hooks.changes import CHANGING_TOOLS
from worker.hooks.registry import HOT_HOOKS
from worker.permissions.policy import MANDATORY_DENY, merge_permissions
from worker.programs.claude.settings import (
    AGENT_HOOKS,
    HOOK_TIMEOUT,
    MATCHERS,
    build_agent_settings,
    hook_command,
)

IB = "/opt/venv/bin/ib"
PERMS = merge_permissions(
    "manager", {"permissions": {"manager": {"deny": ["Bash(curl:*)"]}}}, None, ib_path=IB
)


def _commands(settings: dict[str, object]) -> dict[str, list[str]]:
    hooks = settings["hooks"]
    assert isinstance(hooks, dict)
    return {
        event: [h["command"] for group in groups for h in group["hooks"]] for event, groups in hooks.items()
    }


def test_hooks_and_permissions() -> None:
    settings = build_agent_settings("manager", PERMS, IB)
    assert settings["permissions"] == {
        "defaultMode": "acceptEdits",
        "disableAutoMode": "disable",
        "allow": [*PERMS.allow, "mcp__ittybus"],  # a manager's own ib mcp: every tool, checked by its rights
        "deny": [*MANDATORY_DENY, "Bash(curl:*)"],
    }
    worker = build_agent_settings("worker", PERMS, IB)
    assert worker["permissions"]["allow"] == list(PERMS.allow)  # type: ignore[index]
    assert _commands(settings) == {
        "SessionStart": [f"{IB} hook session-start"],
        "PreToolUse": [f"{IB} hook pre-tool-use"],
        "Stop": [f"{IB} hook stop"],
        "PostToolUse": [f"{IB} hook changes"],
        **{
            event: [f"{IB} hook event"]
            for event in (
                "Notification",
                "PermissionRequest",
                "StopFailure",
                "SessionEnd",
                "PreCompact",
                "UserPromptSubmit",
            )
        },
    }
    json.dumps(settings)  # plain JSON types only


@pytest.mark.parametrize("mode", ["default", "plan", "bypassPermissions", "auto"])
def test_the_permission_mode_is_written(mode: str) -> None:
    """Any mode but auto also turns auto mode off, so no dialog offers to switch to it."""
    permissions = build_agent_settings("worker", PERMS, IB, mode=mode)["permissions"]
    assert isinstance(permissions, dict)
    assert permissions["defaultMode"] == mode
    assert permissions.get("disableAutoMode") == (None if mode == "auto" else "disable")


def test_asking_for_bypass_permissions_accepts_its_warning() -> None:
    assert build_agent_settings("worker", PERMS, IB, mode="bypassPermissions")[
        "skipDangerousModePermissionPrompt"
    ]
    assert "skipDangerousModePermissionPrompt" not in build_agent_settings("worker", PERMS, IB)


def test_claude_code_hook_schema() -> None:
    hooks = build_agent_settings("worker", PERMS, IB)["hooks"]
    assert isinstance(hooks, dict)
    for event, groups in hooks.items():
        assert groups == [
            {
                "matcher": MATCHERS["changes"] if event == "PostToolUse" else "",
                "hooks": [
                    {"type": "command", "command": groups[0]["hooks"][0]["command"], "timeout": HOOK_TIMEOUT}
                ],
            }
        ]


def test_primary_session_hooks_are_not_for_agents() -> None:
    """An agent's PostToolUse is the conflict check's, only after the tools that may change files."""
    hooks = build_agent_settings("worker", PERMS, IB)["hooks"]
    assert isinstance(hooks, dict)
    assert "post-tool-use" not in json.dumps(hooks)
    assert hooks["PostToolUse"][0]["hooks"][0]["command"].endswith("hook changes")


def test_the_matcher_names_the_tools_the_hook_checks() -> None:
    assert MATCHERS["changes"].split("|") == list(CHANGING_TOOLS)


def test_events_the_cli_lacks_are_left_out() -> None:
    hooks = build_agent_settings("worker", PERMS, IB, lacking=("StopFailure", "PermissionRequest"))["hooks"]
    assert isinstance(hooks, dict)
    assert "StopFailure" not in hooks and "PermissionRequest" not in hooks
    assert "Stop" in hooks and "Notification" in hooks


PATHS = {
    "plain": ("/opt/venv/bin/ib", "/opt/venv/bin/ib hook stop"),
    "space": ("/home/me/my venv/bin/ib", "'/home/me/my venv/bin/ib' hook stop"),
    "quote": ("/home/o'neil/bin/ib", "'/home/o'\"'\"'neil/bin/ib' hook stop"),
}


@pytest.mark.parametrize(("ib", "expected"), PATHS.values(), ids=PATHS.keys())
def test_ib_path_is_quoted_for_sh(ib: str, expected: str) -> None:
    command = hook_command(ib, "stop")
    assert command == expected
    assert shlex.split(command) == [ib, "hook", "stop"]


BAD = {
    "unknown-role": ("boss", IB, "unknown agent role 'boss'"),
    "relative-ib": ("worker", "ib", "absolute path"),
}


@pytest.mark.parametrize(("role", "ib", "message"), BAD.values(), ids=BAD.keys())
def test_bad_arguments(role: str, ib: str, message: str) -> None:
    with pytest.raises(WorkerError, match=message):
        build_agent_settings(role, PERMS, ib)


def test_hook_names_are_ours() -> None:
    assert {hook for _, hook in AGENT_HOOKS} == {"session-start", "pre-tool-use", "stop", "event", "changes"}
    assert {hook for _, hook in AGENT_HOOKS} <= set(HOT_HOOKS)
