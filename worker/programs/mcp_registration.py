"""How an agent program is told to start `ib mcp`: the server's name and its stdio entry (the shape of
Claude Code's `.mcp.json` and `--mcp-config`), with a tool timeout above the longest `wait_for_events`.
The person's session gets it from `ib mcp install` (worker.mcp.install); a manager agent from the
command line its spawn writes (worker.programs.claude). Pure."""

from __future__ import annotations

NAME = "ittybus"
MAX_WAIT = 600.0
"""The longest `wait_for_events` waits in one call (a client's tool call times out; Claude Code's does not
before 10 minutes unless MCP_TOOL_TIMEOUT says so): call again with the cursor to wait on."""
CONNECT_TIMEOUT = "MCP_CONNECT_TIMEOUT_MS"
CONNECT_TIMEOUT_MS = 30_000
"""How long Claude Code waits for `ib mcp` to answer before the session's first turn (the entry's
`alwaysLoad`), set in the person's settings (`ib mcp install`) and in a manager agent's environment. Claude
Code 2.1.332's own deadline (14 to 18 s) leaves a busy machine little: `ib mcp` takes about 2 s of CPU to
start on an idle 2-core machine, most of it the MCP SDK's import, and several times that beside a CPU hog.
Its wait is also bounded by MCP_TIMEOUT (30 s by default), which Claude Code ignores in a project's and
its local settings: a stand-in 25 s late was waited for with this deadline, one 33 s late was not. A
server that fails to start ends at once, so a server that cannot come is not waited for any longer."""
ALLOW_RULE = f"mcp__{NAME}"
"""The permission rule that allows every tool of the server (a manager agent's settings carry it)."""


def server_entry(ib_command: str) -> dict[str, object]:
    """The entry that starts the server, with a tool timeout (milliseconds) above the longest wait.
    `alwaysLoad`: Claude Code connects the server before the first turn instead of beside it (in `-p` it
    waits for a background connection only some seconds, then the turn has none of the server's tools)
    and keeps its tools in the prompt rather than behind tool search."""
    return {
        "type": "stdio",
        "command": ib_command,
        "args": ["mcp"],
        "timeout": int(MAX_WAIT + 20) * 1000,
        "alwaysLoad": True,
    }


def mcp_config(ib_command: str) -> dict[str, object]:
    """A whole `--mcp-config` file holding the one server."""
    return {"mcpServers": {NAME: server_entry(ib_command)}}
