"""The server: ittybus's tools on the MCP SDK's server, over stdio. Started inside an agent it acts as
that agent (its pane's `IB_*` environment, its allow-list), as `ib` does there."""

from __future__ import annotations

import sys
from importlib.metadata import version

from mcp.server.mcpserver import MCPServer

from worker.boundary.identity import act_as, agent_caller
from worker.cli.context import Context
from worker.mcp.agent_tools import AgentTools
from worker.mcp.board_tools import BoardTools
from worker.mcp.resources import add_resources
from worker.mcp.session import Session, one_line_errors
from worker.programs.mcp_registration import NAME

INSTRUCTIONS = (
    "ittybus runs coding agents in tmux on a Redis bus. list_agents and look show them; spawn starts one; "
    "approve, deny and answer settle the dialog an agent shows; merge lands its work. wait_for_events "
    "waits for what needs you (a turn's end, a dialog, a question): pass the cursor it returns to the next "
    "call."
)
AGENT_TOOLS: tuple[str, ...] = ("list_agents", "agent_info", "look", "spawn", "send", "approve", "deny")
AGENT_TOOLS += ("answer", "diff", "review_comment", "merge", "resume", "kill")
BOARD_TOOLS: tuple[str, ...] = (
    "task_add",
    "task_list",
    "task_show",
    "task_done",
    "auto_start",
    "auto_status",
    "limits",
)
BOARD_TOOLS += ("attention", "cost", "wait_for_events")


def build(session: Session) -> MCPServer:
    """The server with every tool, each a method of the tool classes with the CLI's errors as tool errors."""
    server: MCPServer = MCPServer(
        NAME, instructions=INSTRUCTIONS, version=version("ittybus"), log_level="WARNING"
    )
    agent_tools, board_tools = AgentTools(session), BoardTools(session)
    for name in AGENT_TOOLS:
        server.add_tool(one_line_errors(getattr(agent_tools, name)), name=name)
    for name in BOARD_TOOLS:
        server.add_tool(one_line_errors(getattr(board_tools, name)), name=name)
    add_resources(server, session)
    return server


def serve(http_port: int | None = None) -> None:
    """`ib mcp`: serve on stdin / stdout until the client closes them, or with a port over HTTP on
    loopback until interrupted (the person's only: an agent's server is the stdio one its program starts)."""
    caller = agent_caller()
    if caller is not None:
        act_as(caller)
    ctx = Context()
    session = Session(ctx, caller)
    try:
        if http_port is None:
            build(session).run("stdio")
            return
        from worker.mcp.http import HttpError, serve_http

        if caller is not None:
            raise HttpError(
                f"agent {caller.id} may not serve ib mcp over HTTP: its program starts `ib mcp` itself"
            )
        serve_http(build(session), str(ctx.root), http_port, _say)
    finally:
        session.close()


def _say(line: str) -> None:
    print(f"ib mcp: {line}", file=sys.stderr, flush=True)
