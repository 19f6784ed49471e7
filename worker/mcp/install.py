"""`ib mcp install`: register `ib mcp` for the person's Claude Code in this repository: the server in the
project's `.mcp.json` (what `claude mcp add --scope project` writes) and its name in the person's
`.claude/settings.local.json` `enabledMcpjsonServers`, so Claude Code starts it without asking first, with
a start-up deadline that a busy machine meets (`env` MCP_CONNECT_TIMEOUT_MS)."""

from __future__ import annotations

import os

from bus.settings.repo_paths import exclude_from_git
from worker.errors import HooksError
from worker.hooks.install import SETTINGS_FILE, load_object, settings_path, write_object
from worker.programs.mcp_registration import CONNECT_TIMEOUT, CONNECT_TIMEOUT_MS, NAME, server_entry

MCP_FILE = ".mcp.json"


def install(root: str, ib_command: str) -> list[str]:
    """Write both files, keeping whatever else they hold; what changed (nothing the second time)."""
    changes: list[str] = []
    path = os.path.join(root, MCP_FILE)
    config = load_object(path)
    servers = config.get("mcpServers", {})
    if not isinstance(servers, dict):
        raise HooksError(f'{path} is malformed: "mcpServers" is not an object. Fix it by hand and try again.')
    wanted = server_entry(ib_command)
    if servers.get(NAME) != wanted:
        config["mcpServers"] = {**servers, NAME: wanted}
        write_object(path, config)
        changes.append(f"{path}: server {NAME!r} runs `{ib_command} mcp`")
    settings_file = settings_path(root)
    settings = load_object(settings_file)
    enabled = settings.get("enabledMcpjsonServers", [])
    if not isinstance(enabled, list):
        raise HooksError(
            f'{settings_file} is malformed: "enabledMcpjsonServers" is not a list. '
            "Fix it by hand and try again."
        )
    env = settings.get("env", {})
    if not isinstance(env, dict):
        raise HooksError(
            f'{settings_file} is malformed: "env" is not an object. Fix it by hand and try again.'
        )
    told: list[str] = []
    if NAME not in enabled:
        settings["enabledMcpjsonServers"] = [*enabled, NAME]
        told.append(f"{settings_file}: {NAME!r} enabled (Claude Code starts it without asking)")
    if CONNECT_TIMEOUT not in env:  # a deadline of the person's own stands
        settings["env"] = {**env, CONNECT_TIMEOUT: str(CONNECT_TIMEOUT_MS)}
        told.append(
            f"{settings_file}: Claude Code waits up to {CONNECT_TIMEOUT_MS // 1000} s for MCP servers to "
            f"start ({CONNECT_TIMEOUT})"
        )
    if told:
        write_object(settings_file, settings)
        exclude_from_git(root, (f"/{SETTINGS_FILE}",))  # the person's own file, as `ib hooks install` has it
    return changes + told
