"""The `ib` application: every command group wired together, and errors turned into one clear line."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any

import redis
import typer
import typer.main
from typer._click import Command
from typer._click.exceptions import ClickException, NoArgsIsHelpError, UsageError  # typer vendors click

from bus.clients import refusal
from bus.errors import BusError
from worker.boundary import guard
from worker.boundary.identity import act_as, agent_caller
from worker.cli import agent_commands as agents
from worker.cli import auto_commands as auto_cli
from worker.cli import (
    bus_commands,
    dialog_commands,
    merge_commands,
    question_commands,
    review_commands,
    service_commands,
    status_commands,
    task_commands,
)
from worker.cli import plan_commands as plans
from worker.cli import stack_commands as stack
from worker.cli.attention_commands import attention as attention_command
from worker.cli.bot_commands import bot as bot_command
from worker.cli.budget_commands import budget_app
from worker.cli.cost_commands import cost as cost_command
from worker.cli.limit_commands import limits as limits_command
from worker.cli.schedule_commands import schedule_app
from worker.errors import WorkerError

app = typer.Typer(
    name="ib",
    help="ittybus: coding agents in tmux on a Redis bus.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)


def _print_version(wanted: bool) -> None:
    if wanted:
        from importlib.metadata import version

        print(f"ib (ittybus) {version('ittybus')}")
        raise typer.Exit()


@app.callback()
def _options(
    version: bool = typer.Option(
        False, "--version", "-V", callback=_print_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """ittybus: coding agents in tmux on a Redis bus."""


hook_app = typer.Typer(help="Claude Code hooks (called by Claude Code, not by people).", no_args_is_help=True)

# `ib --help` in panels: the five commands a newcomer needs first, then by what they act on, the plumbing
# last. A panel shows where its first command is registered, and its commands in the order registered.
START, AGENTS, ANSWER, TASKS, BUS, STACK, TELEGRAM, PLUMBING = (
    "Start here",
    "Agents",
    "Dialogs, questions and messages",
    "Tasks, plans and auto mode",
    "Bus and events",
    "Stack",
    "Telegram",
    "Plumbing (agents, hooks and scripts call these)",
)
command: Callable[..., Any]  # the loops below register commands of every signature
app.command(rich_help_panel=START)(stack.up)
app.command("new-agent", rich_help_panel=START)(agents.new_agent_cmd)
app.command("list", rich_help_panel=START)(agents.list_cmd)
app.command(rich_help_panel=START)(agents.look)
app.command(rich_help_panel=START)(stack.watch)
for command in (agents.tree, agents.info, agents.status, agents.diff, review_commands.review):
    app.command(rich_help_panel=AGENTS)(command)
# everything after the agent id is text, also words that start with "-"
app.command(context_settings={"ignore_unknown_options": True}, rich_help_panel=AGENTS)(agents.send)
for command in (agents.esc, agents.pause, agents.resume, agents.merge, agents.kill, agents.nuke):
    app.command(rich_help_panel=AGENTS)(command)
app.command("merge-check", rich_help_panel=AGENTS)(agents.merge_check)
app.command("merge-queue", rich_help_panel=AGENTS)(merge_commands.merge_queue)
app.command("cost", rich_help_panel=AGENTS)(cost_command)
app.command("limits", rich_help_panel=AGENTS)(limits_command)
app.add_typer(budget_app, name="budget", rich_help_panel=AGENTS)
for command in (dialog_commands.approve, dialog_commands.deny, dialog_commands.answer):
    app.command(rich_help_panel=ANSWER)(command)
app.command(rich_help_panel=ANSWER)(question_commands.questions)
app.command("attention", rich_help_panel=ANSWER)(attention_command)
app.command("reply", rich_help_panel=ANSWER)(question_commands.answer)
app.command(rich_help_panel=ANSWER)(question_commands.acknowledge)
app.command(rich_help_panel=ANSWER)(status_commands.messages)
task_commands.task_app.add_typer(schedule_app, name="schedule")
app.add_typer(task_commands.task_app, name="task", rich_help_panel=TASKS)
app.add_typer(auto_cli.auto_app, name="auto", rich_help_panel=TASKS)
app.command(rich_help_panel=TASKS)(plans.plan)
app.command(rich_help_panel=TASKS)(plans.plans)
app.command("plan-approve", rich_help_panel=TASKS)(plans.plan_approve)
app.command("plan-edit", rich_help_panel=TASKS)(plans.plan_edit)
app.command("plan-discard", rich_help_panel=TASKS)(plans.plan_discard)
app.add_typer(bus_commands.bus_app, name="bus", rich_help_panel=BUS)
app.command(rich_help_panel=BUS)(bus_commands.listen)
app.command(rich_help_panel=BUS)(bus_commands.events)
app.command(rich_help_panel=BUS)(bus_commands.notify)
for command in (stack.down, stack.ps, service_commands.worker, bus_commands.config):
    app.command(rich_help_panel=STACK)(command)
app.add_typer(service_commands.hooks_app, name="hooks", rich_help_panel=STACK)
app.command("bot", rich_help_panel=TELEGRAM)(bot_command)
app.command(rich_help_panel=PLUMBING)(question_commands.ask)
app.command(rich_help_panel=PLUMBING)(agents.log)
app.command("spool", rich_help_panel=PLUMBING)(bus_commands.spool_cmd)
app.command("parse-state", rich_help_panel=PLUMBING)(question_commands.parse_state)
app.command("status-node", rich_help_panel=PLUMBING)(status_commands.status_node)
app.add_typer(hook_app, name="hook", rich_help_panel=PLUMBING)

HOOK_HELP = {
    "post-tool-use": "The primary session's PostToolUse / UserPromptSubmit: keep `ib listen` running.",
    "stop": "An agent's Stop hook: publish complete / waiting once per turn and tell its manager.",
    "session-start": "An agent's SessionStart hook: record its Claude session and transcript.",
    "event": "An agent's Notification, PermissionRequest, StopFailure, SessionEnd, PreCompact and "
    "UserPromptSubmit hooks: its state and the events a person needs (permission, question, error, stopped).",
    "gemini": "A Gemini CLI agent's BeforeAgent, AfterAgent, BeforeTool, AfterTool, Notification and "
    "SessionEnd hooks: its state and the events a person needs (permission, complete, waiting, stopped).",
    "pre-tool-use": "An agent's PreToolUse hook: keep it inside its worktree and its tool lists.",
    "primary-pre-tool-use": "The primary session's PreToolUse hook: no `cd` into agents' worktrees.",
    "tmux-status": "Stop / PostToolUse: the tmux window indicator (🤖✅ / 🤖⚙️).",
    "changes": "An agent's PostToolUse after a file-changing tool: ask its worker for a conflict check "
    "and print the conflict notes left for it.",
    "codex": "A Codex CLI agent's hooks.json command (SessionStart, UserPromptSubmit, PermissionRequest, "
    "PostToolUse, Stop, SessionEnd): its state and events, a turn's end published once.",
    "codex-notify": "A Codex CLI agent's notify program (the JSON as its last argument): a turn's end, "
    "published once; the hidden title thread's turns are ignored.",
}


def _hook_command(name: str) -> None:
    def run_hook() -> None:
        from importlib import import_module

        from worker.hooks.registry import HOT_HOOKS

        raise typer.Exit(import_module(HOT_HOOKS[name]).main([]))

    run_hook.__doc__ = HOOK_HELP[name] + " Reads the hook's JSON on stdin; never fails the session."
    hook_app.command(name)(run_hook)


for _name in HOOK_HELP:
    _hook_command(_name)


def run() -> None:
    """Entry point: a person never sees a traceback for a mistake of theirs. A usage error is one line
    `ib <command>: error: ...` and exit 2; any other refusal one line and exit 1."""
    try:
        code = _application().main(prog_name="ib", standalone_mode=False)
    except NoArgsIsHelpError as e:  # `ib` or `ib task` alone: the help, as before
        print(e.ctx.get_help())
        sys.exit(2)
    except UsageError as e:
        command = e.ctx.command_path if e.ctx is not None else "ib"
        _fail(_one_line(e.format_message()), 2, command)
    except ClickException as e:
        _fail(_one_line(e.format_message()))
    except (BusError, WorkerError) as e:
        _fail(str(e))
    except redis.RedisError as e:
        _fail(_redis_failure(e))
    except (KeyboardInterrupt, typer.Abort):
        sys.exit(130)
    sys.exit(code if isinstance(code, int) else 0)


def _redis_failure(error: redis.RedisError) -> str:
    """Wrong credentials or database are a setting to fix; a connection lost half way is an outage."""
    refused = refusal(error)
    if refused is not None:
        return refused
    if isinstance(error, redis.ConnectionError):  # Redis went away in the middle of a command
        return f"lost the connection to Redis ({error}); is it running? (ib bus status)"
    raise error


def _application() -> Command:
    """The click command of `app`; inside an agent every command body is behind the agent's boundary
    (worker.boundary), its `IB_*` environment the one its pane was started with."""
    command = typer.main.get_command(app)
    caller = agent_caller()
    if caller is not None:
        act_as(caller)
        guard.install(command, caller, os.getcwd(), _manager_of)
    return command


def _manager_of(agent_id: str) -> str | None:
    from worker.cli.context import Context

    try:
        agent = Context().runtime.agents.find(agent_id)
    except (BusError, WorkerError, ValueError):
        return None
    return agent.manager if agent is not None else None


def _one_line(message: str) -> str:
    return " ".join(message.split())


def _fail(message: str, code: int = 1, command: str | None = None) -> None:
    if command is None:
        name = sys.argv[1] if len(sys.argv) > 1 else ""
        command = f"ib {name}".strip()
    print(f"{command}: error: {message}", file=sys.stderr)
    sys.exit(code)
