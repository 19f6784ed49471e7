"""`ib worker` (the per-machine service) and `ib hooks install | uninstall | status`."""

from __future__ import annotations

import logging

import typer

from bus.wire.address import masked_url
from worker.cli.context import Context
from worker.cli.output import console
from worker.hooks.install import install, status, uninstall
from worker.runtime import IB_COMMAND


def worker(
    once: bool = typer.Option(False, "--once", help="handle what is pending, look once, and exit"),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="log every command and state change"),
) -> None:
    """Run this machine's worker: bus commands, pane states, transcripts. Ctrl-C leaves agents running.

    Example: ib worker
    """
    from worker.service.process import WorkerService

    logging.basicConfig(
        level=logging.INFO if verbose else logging.WARNING, format="%(asctime)s %(name)s %(message)s"
    )
    ctx = Context()
    service = WorkerService(ctx.runtime, ctx.blocking_redis())
    service.stop_on_signals()
    where = masked_url(ctx.url)

    def ready() -> None:  # once it re-adopted its agents and looked at every pane: running, truly
        console().print(
            f"worker {ctx.settings.worker_id} running on {where} (Ctrl-C stops it; agents keep running)",
            soft_wrap=True,  # one line in a log file too
        )

    service.run(once=once, ready=ready)


hooks_app = typer.Typer(
    help="Install ittybus's hooks into this repository's Claude Code settings.", no_args_is_help=True
)


def _root() -> str:
    """The repository whose settings the hooks go into: the bus may be stopped (the README's uninstall)."""
    return str(Context().root)


@hooks_app.command("install")
def hooks_install(
    tmux_indicator: bool = typer.Option(False, "--tmux-indicator", help="also the tmux window indicator"),
) -> None:
    """Add our hooks to .claude/settings.local.json (listener reminder, no cd into agents).

    Example: ib hooks install --tmux-indicator
    """
    changes = install(_root(), IB_COMMAND, tmux_indicator)
    console().print("\n".join(changes) if changes else "already installed", soft_wrap=True)


@hooks_app.command("uninstall")
def hooks_uninstall() -> None:
    """Remove our hooks (and only ours) from .claude/settings.local.json."""
    changes = uninstall(_root())
    console().print("\n".join(changes) if changes else "nothing to remove", soft_wrap=True)


@hooks_app.command("status")
def hooks_status() -> None:
    """Show which of our hooks are installed."""
    state = status(_root())
    console().print(f"{state.path}: {'installed' if state.installed else 'not installed'}")
    for found in state.found:
        console().print(f"  {found.event}: {found.hook}")
    for event, name in state.missing:
        console().print(f"  missing {event}: {name}")
    console().print(f"tmux indicator: {'on' if state.tmux_indicator else 'off'}")
