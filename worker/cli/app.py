"""The `ib` application: every command group wired together, and errors turned into one clear line."""

from __future__ import annotations

import sys

import typer

from bus.errors import BusError
from worker.cli import bus_commands

app = typer.Typer(
    name="ib",
    help="ittybus: coding agents in tmux on a Redis bus.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
hook_app = typer.Typer(help="Claude Code hooks (called by Claude Code, not by people).", no_args_is_help=True)

app.command()(bus_commands.notify)
app.command()(bus_commands.listen)
app.command()(bus_commands.events)
app.command("spool")(bus_commands.spool_cmd)
app.command()(bus_commands.config)
app.add_typer(bus_commands.bus_app, name="bus")
app.add_typer(hook_app, name="hook")


@hook_app.command("post-tool-use")
def hook_post_tool_use() -> None:
    """PostToolUse / UserPromptSubmit of the primary session: remind Claude to restart `ib listen`."""
    from worker.hooks.post_tool_use import main

    raise typer.Exit(main([]))


def run() -> None:
    """Entry point: a person never sees a traceback for a mistake of theirs."""
    try:
        app(prog_name="ib")
    except BusError as e:
        command = sys.argv[1] if len(sys.argv) > 1 else ""
        print(f"ib {command}: error: {e}".replace("ib : ", "ib: "), file=sys.stderr)
        sys.exit(1)
    except KeyboardInterrupt:
        sys.exit(130)
