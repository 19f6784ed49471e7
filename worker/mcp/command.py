"""`ib mcp` (the server over stdio) and `ib mcp install` (register it for Claude Code here)."""

from __future__ import annotations

import typer

from worker.cli.context import Context
from worker.cli.output import console
from worker.runtime import IB_COMMAND

mcp_app = typer.Typer(
    help="ittybus as an MCP server: typed tools for Claude Code, Codex CLI, Gemini CLI and manager agents.",
    invoke_without_command=True,
)


@mcp_app.callback()
def mcp(
    ctx: typer.Context,
    http: bool = typer.Option(False, "--http", help="serve streamable HTTP on 127.0.0.1 instead of stdio"),
    port: int = typer.Option(8391, "--port", min=1, max=65535, help="with --http: the port"),
) -> None:
    """Serve ittybus's tools over stdio (what an MCP client starts); `ib mcp install` registers it.
    With --http, at http://127.0.0.1:PORT/mcp for requests with the token in .ib/mcp-token.

    Example: claude mcp add ittybus -- ib mcp
    """
    if ctx.invoked_subcommand is None:
        from worker.mcp.server import serve

        serve(port if http else None)


@mcp_app.command("install")
def install() -> None:
    """Register `ib mcp` for Claude Code in this repository (.mcp.json; enabled in settings.local.json)."""
    from worker.mcp.install import install as write

    changes = write(str(Context().root), IB_COMMAND)
    console().print("\n".join(changes) if changes else "already installed", soft_wrap=True)
