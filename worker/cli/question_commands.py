"""`ib ask`, `ib questions`, `ib acknowledge`, and `ib parse-state`."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import typer

from bus.inbox.ages import format_age
from bus.settings.repo_paths import agent_from_path
from worker.cli.context import Context
from worker.cli.output import console
from worker.terminal_text import printable


def ask(
    question: list[str] = typer.Argument(..., help="the question"),
    option: list[str] = typer.Option(
        None, "--option", help="a possible answer (repeatable): shown as buttons"
    ),
    agent: str = typer.Option(None, "--from", help="the asking agent (default: the agent running this)"),
) -> None:
    """Ask the person a question (agents use it); it waits in `ib questions` until acknowledged.

    Example: ib ask "Postgres or SQLite?" --option Postgres --option SQLite
    """
    from worker.agents.talk import ask as ask_question

    ctx = Context()
    who = agent or agent_from_path(ctx.cwd) or ctx.settings.agent_id or "unknown"
    asked = ask_question(ctx.runtime, who, " ".join(question), tuple(option or ()))
    console().print(f"question {asked.id} sent; the answer will arrive as a message")


def questions(as_json: bool = typer.Option(False, "--json", help="print JSON")) -> None:
    """Questions agents asked that nobody acknowledged yet."""
    pending = Context().runtime.questions.pending()
    if as_json:
        print(json.dumps([json.loads(q.to_json()) for q in pending], indent=2, ensure_ascii=False))
        return
    if not pending:
        console().print("no pending questions")
    import time

    for q in pending:
        text = printable(q.text, keep="\n")
        console().print(
            f"{q.id}  {q.agent}  {format_age(time.time() - q.asked_at)} ago: {text}", markup=False
        )
        if q.options:
            console().print("        options: " + " | ".join(printable(o) for o in q.options), markup=False)


def answer(
    question_id: str = typer.Argument(..., help="question id (q-..., see ib questions)"),
    text: list[str] = typer.Argument(..., help="the answer; words are joined with spaces"),
) -> None:
    """Send the answer to the agent that asked, and acknowledge the question (as a reply in Telegram does).

    Example: ib reply q-1a2b3c4d "Postgres"
    """
    from bus.commands.worker_commands import Answer

    ctx = Context()
    asker = ctx.runtime.questions.get(question_id).agent
    ctx.on_owner(Answer(question=question_id, text=" ".join(text)))  # on the asker's machine
    console().print(f"answered {question_id}: sent to {asker}")


def acknowledge(
    item_id: str = typer.Argument(None, help="question id (q-...) or message id (m-...)"),
    all_: bool = typer.Option(False, "--all", help="every pending question and message"),
) -> None:
    """Mark a question (after answering it with `ib send`) or a message for you (m-...) as handled.

    Example: ib acknowledge q-1a2b3c4d
    """
    from worker.agents import user_messages

    ctx = Context()
    rt = ctx.runtime
    by = agent_from_path(ctx.cwd) or ctx.settings.agent_id
    if all_:
        pending = rt.questions.pending()
        for q in pending:
            rt.questions.acknowledge(q.id)
        gone = user_messages.acknowledge_all(rt, by)
        console().print(f"acknowledged {len(pending)} question(s) and {len(gone)} message(s)")
        return
    if not item_id:
        raise typer.BadParameter("give a question id (q-...), a message id (m-...) or --all", param_hint="ID")
    if user_messages.is_message_id(item_id):
        user_messages.acknowledge(rt, item_id, by)
    else:
        rt.questions.acknowledge(item_id)
    console().print(f"acknowledged {item_id}")


def parse_state(
    source: str = typer.Argument("-", help="a file with a pane capture, or - for stdin"),
    cli: str | None = typer.Option(
        None,
        "--cli",
        help="the program that drew it: claude, codex or gemini (default: from the capture's shape, "
        "else IB_DEFAULT_CLI)",
    ),
) -> None:
    """Print the state the parser reads from a pane capture.

    Example: tmux capture-pane -p -t SESSION | ib parse-state - --cli codex
    """
    from worker.programs.registry import program
    from worker.programs.screen_shape import program_of_screen

    chosen = program(cli) if cli is not None else None  # a wrong name is refused before reading
    if source == "-":
        text = sys.stdin.read()
    else:
        try:
            text = Path(source).read_text(encoding="utf-8", errors="replace")
        except OSError as e:
            raise typer.BadParameter(f"cannot read {source}: {e.strerror}", param_hint="FILE") from e
    if chosen is None:
        shaped = program_of_screen(text)
        chosen = program(shaped or Context().settings.default_cli, option="IB_DEFAULT_CLI")
    print(chosen.pane_state(text).value)
