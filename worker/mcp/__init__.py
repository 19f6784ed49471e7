"""`ib mcp`: ittybus as a Model Context Protocol server, so a program that speaks MCP (Claude Code, Codex
CLI, Gemini CLI, a manager agent) drives the fleet through typed tools instead of shell lines.

Each tool calls what the matching `ib` command calls (the CLI modules' shared functions, the worker
commands through `run_on_owner`, the bus stores) and answers with structured content and a short text;
a refusal is a tool error with the CLI's one line. Started inside an agent, the server acts with that
agent's rights through the boundary's own guard. It sits above `worker.cli`, whose context and shared
functions it uses; `ib mcp` reaches it through the CLI's command table.
"""
