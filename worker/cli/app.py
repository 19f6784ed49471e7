"""The `ib` application: every command group wired together, and errors turned into one clear line.

Commands are named in a table (`COMMANDS`) and their modules imported only when needed: `ib task add`
loads the task commands and what they use, not the agents', the bot's or the review's (each `ib` process
is started by scripts, hooks and agents many times a minute; a full load costs about twice the CPU of one
command's). `ib --help`, an unknown word and the documentation get the whole application, in the order
the table gives.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from importlib import import_module
from typing import TYPE_CHECKING, Any, cast

import typer
import typer.main
from typer._click import Command
from typer._click.exceptions import ClickException, NoArgsIsHelpError, UsageError  # typer vendors click

from bus.errors import BusError
from worker.boundary.identity import act_as, agent_caller
from worker.errors import WorkerError

if TYPE_CHECKING:
    import redis


def _print_version(wanted: bool) -> None:
    if wanted:
        from importlib.metadata import version

        print(f"ib (ittybus) {version('ittybus')}")
        raise typer.Exit()


def _options(
    version: bool = typer.Option(
        False, "--version", "-V", callback=_print_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """ittybus: coding agents in tmux on a Redis bus."""


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


@dataclass(frozen=True)
class Entry:
    """One word after `ib`: a command (a function) or a group (a typer app) in `module`."""

    name: str
    module: str
    attr: str
    panel: str
    group: bool = False
    settings: dict[str, Any] = field(default_factory=dict)

    def register(self, app: typer.Typer) -> None:
        found = getattr(import_module(self.module), self.attr)
        if self.group and not isinstance(found, typer.Typer):
            found = found()  # a function that makes the group
        if not self.group:
            app.command(self.name, rich_help_panel=self.panel, context_settings=self.settings or None)(found)
            return
        if self.name == "task":  # `ib task schedule ...` lives in a module of its own
            from worker.cli.schedule_commands import schedule_app

            if not any(g.name == "schedule" for g in found.registered_groups):
                found.add_typer(schedule_app, name="schedule")
        app.add_typer(found, name=self.name, rich_help_panel=self.panel)


def _commands(panel: str, module: str, *names: str) -> list[Entry]:
    """Commands of one panel and module, each a function named as the command (`-` for `_`)."""
    return [Entry(name, f"worker.cli.{module}", name.replace("-", "_"), panel) for name in names]


AGENT, STACK_CMDS, QUESTION = "agent_commands", "stack_commands", "question_commands"
COMMANDS: tuple[Entry, ...] = (
    Entry("up", f"worker.cli.{STACK_CMDS}", "up", START),
    Entry("new-agent", f"worker.cli.{AGENT}", "new_agent_cmd", START),
    Entry("list", f"worker.cli.{AGENT}", "list_cmd", START),
    Entry("look", f"worker.cli.{AGENT}", "look", START),
    Entry("watch", f"worker.cli.{STACK_CMDS}", "watch", START),
    *_commands(AGENTS, AGENT, "tree", "info", "status", "diff"),
    Entry("review", "worker.cli.review_commands", "review", AGENTS),
    # everything after the agent id is text, also words that start with "-"
    Entry("send", f"worker.cli.{AGENT}", "send", AGENTS, settings={"ignore_unknown_options": True}),
    *_commands(AGENTS, AGENT, "esc", "pause", "resume", "merge", "kill", "nuke", "merge-check"),
    Entry("merge-queue", "worker.cli.merge_commands", "merge_queue", AGENTS),
    Entry("cost", "worker.cli.cost_commands", "cost", AGENTS),
    Entry("limits", "worker.cli.limit_commands", "limits", AGENTS),
    Entry("budget", "worker.cli.budget_commands", "budget_app", AGENTS, group=True),
    *_commands(ANSWER, "dialog_commands", "approve", "deny", "answer"),
    Entry("questions", f"worker.cli.{QUESTION}", "questions", ANSWER),
    Entry("attention", "worker.cli.attention_commands", "attention", ANSWER),
    Entry("reply", f"worker.cli.{QUESTION}", "answer", ANSWER),
    Entry("acknowledge", f"worker.cli.{QUESTION}", "acknowledge", ANSWER),
    Entry("messages", "worker.cli.status_commands", "messages", ANSWER),
    Entry("task", "worker.cli.task_commands", "task_app", TASKS, group=True),
    Entry("auto", "worker.cli.auto_commands", "auto_app", TASKS, group=True),
    *_commands(TASKS, "plan_commands", "plan", "plans", "plan-approve", "plan-edit", "plan-discard"),
    Entry("bus", "worker.cli.bus_commands", "bus_app", BUS, group=True),
    *_commands(BUS, "bus_commands", "listen", "events", "notify"),
    Entry("ack", "worker.cli.push_commands", "ack", BUS),
    *_commands(STACK, STACK_CMDS, "down", "ps"),
    Entry("worker", "worker.cli.service_commands", "worker", STACK),
    Entry("config", "worker.cli.bus_commands", "config", STACK),
    Entry("hooks", "worker.cli.service_commands", "hooks_app", STACK, group=True),
    Entry("mcp", "worker.mcp.command", "mcp_app", STACK, group=True),  # the MCP server sits above the CLI
    Entry("web", "worker.cli.web_commands", "web", STACK),
    Entry("bot", "worker.cli.bot_commands", "bot", TELEGRAM),
    Entry("ask", f"worker.cli.{QUESTION}", "ask", PLUMBING),
    Entry("log", f"worker.cli.{AGENT}", "log", PLUMBING),
    Entry("spool", "worker.cli.bus_commands", "spool_cmd", PLUMBING),
    Entry("parse-state", f"worker.cli.{QUESTION}", "parse_state", PLUMBING),
    Entry("status-node", "worker.cli.status_commands", "status_node", PLUMBING),
    Entry("hook", "worker.cli.app", "hook_app", PLUMBING, group=True),  # made by hook_app() below
)
BY_NAME = {entry.name: entry for entry in COMMANDS}


def build(only: str | None = None) -> typer.Typer:
    """The `ib` application: with `only` (a word of COMMANDS), that command alone; else all of them."""
    app = typer.Typer(
        name="ib",
        help="ittybus: coding agents in tmux on a Redis bus.",
        no_args_is_help=True,
        pretty_exceptions_enable=False,
        add_completion=False,
    )
    app.callback()(_options)
    for entry in COMMANDS:
        if only is None or entry.name == only:
            entry.register(app)
    return app


_built: dict[str | None, Command] = {}


def click_command(only: str | None = None) -> Command:
    """`build(only)` as click runs it, made once per process: the warm server (worker.cli.warm) makes
    every one before it forks, so a command's process finds its own made."""
    if only not in _built:
        _built[only] = typer.main.get_command(build(only))
    return _built[only]


def __getattr__(name: str) -> Any:
    """`app`: the whole application (its help, its reference in the documentation, its tests)."""
    if name == "app":
        return build()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


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


def _hook_command(hook_app: typer.Typer, name: str) -> None:
    def run_hook() -> None:
        from importlib import import_module

        from worker.hooks.registry import HOT_HOOKS

        raise typer.Exit(import_module(HOT_HOOKS[name]).main([]))

    run_hook.__doc__ = HOOK_HELP[name] + " Reads the hook's JSON on stdin; never fails the session."
    hook_app.command(name)(run_hook)


def hook_app() -> typer.Typer:
    hooks = typer.Typer(
        help="Claude Code hooks (called by Claude Code, not by people).", no_args_is_help=True
    )
    for name in HOOK_HELP:
        _hook_command(hooks, name)
    return hooks


def run() -> None:
    """Entry point: a person never sees a traceback for a mistake of theirs. A usage error is one line
    `ib <command>: error: ...` and exit 2; any other refusal one line and exit 1."""
    try:
        code = _application(sys.argv[1:]).main(prog_name="ib", standalone_mode=False)
    except NoArgsIsHelpError as e:  # `ib` or `ib task` alone: the help, as before
        print(e.ctx.get_help())
        sys.exit(2)
    except UsageError as e:
        command = e.ctx.command_path if e.ctx is not None else "ib"
        _fail(_one_line(e.format_message()), 2, command)
    except (ClickException, BusError, WorkerError) as e:
        _fail(error_line(e))
    except (KeyboardInterrupt, typer.Abort):
        sys.exit(130)
    except Exception as e:
        if not is_redis_error(e):  # only a command that loaded redis-py can fail in it
            raise
        _fail(error_line(e))
    sys.exit(code if isinstance(code, int) else 0)


def is_redis_error(error: BaseException) -> bool:
    """A redis-py error, without loading redis-py for the commands that never did."""
    redis = sys.modules.get("redis")
    return redis is not None and isinstance(error, redis.RedisError)


def error_line(error: Exception) -> str:
    """The one line a person reads for a refusal (what is wrong and what to do), never a traceback; an
    unexpected error (a Redis error that is no setting and no outage included) is raised again."""
    if isinstance(error, ClickException):
        return _one_line(error.format_message())
    if isinstance(error, BusError | WorkerError):
        return str(error)
    if is_redis_error(error):
        return _redis_failure(cast("redis.RedisError", error))
    raise error


def _redis_failure(error: redis.RedisError) -> str:
    """Wrong credentials or database are a setting to fix; a connection lost half way is an outage."""
    import redis

    from bus.connection.clients import refusal

    refused = refusal(error)
    if refused is not None:
        return refused
    if isinstance(error, redis.ConnectionError):  # Redis went away in the middle of a command
        return f"lost the connection to Redis ({error}); is it running? (ib bus status)"
    raise error


def _application(argv: list[str]) -> Command:
    """The click command of the application `argv` asks for (its first word's command alone when it names
    one); inside an agent every command body is behind the agent's boundary (worker.boundary), its `IB_*`
    environment the one its pane was started with."""
    word = argv[0] if argv else ""
    command = click_command(word if word in BY_NAME else None)
    caller = agent_caller()
    if caller is not None:
        from worker.boundary import guard

        act_as(caller)
        guard.install(command, caller, os.getcwd(), _manager_of)
    return command


def _manager_of(agent_id: str) -> str | None:
    from worker.boundary.guard import manager_in
    from worker.cli.context import Context

    try:
        agents = Context().runtime.agents
    except (BusError, WorkerError, ValueError):
        return None
    return manager_in(agents, agent_id)


def _one_line(message: str) -> str:
    return " ".join(message.split())


def _fail(message: str, code: int = 1, command: str | None = None) -> None:
    if command is None:
        name = sys.argv[1] if len(sys.argv) > 1 else ""
        command = f"ib {name}".strip()
    print(f"{command}: error: {message}", file=sys.stderr)
    sys.exit(code)
