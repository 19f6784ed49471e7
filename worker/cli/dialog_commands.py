"""`ib approve`, `ib deny`, `ib answer`: answer the dialog an agent shows (permission, plan, folder
trust, AskUserQuestion, auto mode's, any other) with the keys the dialog expects, on the agent's own
machine (through its worker when that is another one)."""

from __future__ import annotations

import typer

from worker.cli.context import Context
from worker.cli.output import console

PROMPT_HELP = "answer only this dialog (the prompt_id of its event): 'already answered' otherwise"


def approve(
    agent_id: str = typer.Argument(..., help="agent id"),
    always: bool = typer.Option(False, "--always", help="and do not ask again for this (when offered)"),
    prompt: str = typer.Option(None, "--prompt", help=PROMPT_HELP),
) -> None:
    """Allow the tool call an agent asks permission for, trust its folder, or accept its plan.

    Example: ib approve agent-1 --always
    """
    from bus.commands.worker_commands import Approve

    console().print(Context().on_owner(Approve(agent=agent_id, always=always, prompt=prompt)))


def deny(
    agent_id: str = typer.Argument(..., help="agent id"),
    reason: list[str] = typer.Argument(None, help="what the agent should do instead (sent after the No)"),
    prompt: str = typer.Option(None, "--prompt", help=PROMPT_HELP),
) -> None:
    """Refuse the tool call (and tell the agent why), refuse the folder, or keep planning.

    Example: ib deny agent-1 "do not touch the database; use the fixtures"
    """
    from bus.commands.worker_commands import Deny

    console().print(Context().on_owner(Deny(agent=agent_id, reason=" ".join(reason or []), prompt=prompt)))


def answer(
    agent_id: str = typer.Argument(..., help="agent id"),
    option: list[str] = typer.Argument(..., help="the option's number or its label"),
    prompt: str = typer.Option(None, "--prompt", help=PROMPT_HELP),
) -> None:
    """Pick an option of any dialog an agent shows: its number (its place in an unnumbered list) or
    its label, as `ib look` shows them.

    Example: ib answer agent-1 2    ib answer agent-1 SQLite
    """
    from bus.commands.worker_commands import Choose

    console().print(Context().on_owner(Choose(agent=agent_id, answer=" ".join(option), prompt=prompt)))
