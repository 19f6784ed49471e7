"""Which of the hook events ittybus installs a Claude Code version has. The table is pure; asking the
agent program for its version (`<command> --version`) is the one I/O function, cached per command.

Claude Code rejects a settings file that names a hook event it does not know, so an agent's settings
name only the events its program has, and `ib new-agent` says which ones it had to leave out.
"""

from __future__ import annotations

import functools
import os
import re
import shlex
import shutil
import subprocess

from worker.programs.probe import broken_link

HOOK_EVENT_SINCE: dict[str, tuple[int, int, int]] = {
    "PreToolUse": (1, 0, 0),
    "Stop": (1, 0, 0),
    "Notification": (1, 0, 0),
    "UserPromptSubmit": (1, 0, 54),
    "PreCompact": (1, 0, 48),
    "SessionStart": (1, 0, 62),
    "SessionEnd": (1, 0, 85),
    "PermissionRequest": (2, 0, 45),
    "StopFailure": (2, 1, 78),
}
"""The Claude Code release each hook event first appeared in (from its changelog)."""
TESTED_VERSION = "2.1.332"
VERSION_TIMEOUT = 10.0
_VERSION = re.compile(r"(\d+)\.(\d+)\.(\d+)")
_CLAUDE_CODE = re.compile(r"^\s*\d+\.\d+\.\d+ \(Claude Code\)")  # what `claude --version` prints


def parse_version(text: str) -> tuple[int, int, int] | None:
    """(major, minor, patch) from `claude --version` output ("2.1.332 (Claude Code)"); None if absent."""
    found = _VERSION.search(text)
    return (int(found[1]), int(found[2]), int(found[3])) if found else None


def lacking_events(version: tuple[int, int, int] | None, events: tuple[str, ...]) -> tuple[str, ...]:
    """The events among `events` that `version` does not have. An unknown version (another program,
    a fake agent) is taken to have them all."""
    if version is None:
        return ()
    return tuple(e for e in events if e in HOOK_EVENT_SINCE and version < HOOK_EVENT_SINCE[e])


_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


def program_problem(agent_command: str, path: str | None = None) -> str | None:
    """Why the agent command cannot start (not shell words, empty, its program not found on `path`,
    default PATH), or None. Leading `NAME=value` words are variables for the program, as in sh."""
    try:
        words = shlex.split(agent_command)
    except ValueError as e:
        return f"IB_AGENT_COMMAND {agent_command!r} is not valid shell words ({e})"
    while words and _ASSIGNMENT.match(words[0]):
        words.pop(0)
    if not words:
        return f"IB_AGENT_COMMAND {agent_command!r} names no program"
    if shutil.which(words[0], path=path) is not None:
        return None
    link = broken_link(words[0], path)
    if link:
        return f"the agent program at {link} is a broken symlink (to {os.readlink(link)}): reinstall it"
    if words[0] == "claude":
        return (
            "Claude Code (`claude`) is not installed or not on PATH: install it "
            "(npm install -g @anthropic-ai/claude-code) or point IB_AGENT_COMMAND at it"
        )
    return f"the agent program {words[0]!r} (IB_AGENT_COMMAND) is not installed or not on PATH"


def format_version(version: tuple[int, int, int] | None) -> str:
    return ".".join(map(str, version)) if version else "unknown"


@functools.cache
def program_version(agent_command: str) -> tuple[int, int, int] | None:
    """The version the agent program reports; None when it cannot say (not Claude Code, or broken)."""
    try:
        words = shlex.split(agent_command)
        done = subprocess.run(
            [*words, "--version"],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=VERSION_TIMEOUT,
            check=False,
        )
    except (OSError, ValueError, subprocess.SubprocessError):
        return None
    if done.returncode != 0 or not _CLAUDE_CODE.match(done.stdout):
        return None
    return parse_version(done.stdout)
