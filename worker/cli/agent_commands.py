"""`ib` commands about agents: spawn, inspect, talk to, merge and end them."""

from __future__ import annotations

import json
import sys
import time
from base64 import b64decode
from typing import TYPE_CHECKING, Any

import typer

from bus.errors import BusUnavailable, InvalidInput, NoBusHere
from bus.settings.repo_paths import agent_from_path
from bus.wire.ids import validate_id
from worker.cli.context import Context
from worker.cli.output import console

if TYPE_CHECKING:
    from collections.abc import Callable

    from bus.commands.worker_commands import NewAgent
    from bus.stores.agent_store import Agent
    from worker.agents.talk import Screenshot
    from worker.runtime import Runtime

# What only some commands need is imported in them (spawning, talking to the person, working without the
# bus, the sandbox line): each `ib` process loads what its one command uses.


def _caller(ctx: Context) -> str | None:
    return agent_from_path(ctx.cwd) or ctx.settings.agent_id


def new_agent_cmd(
    goal: str = typer.Argument("", help="what the agent should do"),
    name: str = typer.Option(None, help="agent id (default: agent-<random>)"),
    manager: str = typer.Option(None, help="manager agent (default: the agent running this command)"),
    worker: bool = typer.Option(False, "--worker", help="a worker: cannot spawn agents of its own"),
    no_worktree: bool = typer.Option(False, "--no-worktree", help="work in the repository itself"),
    model: str = typer.Option(None, help="model passed to the agent program"),
    permission_mode: str = typer.Option(
        None,
        "--permission-mode",
        help="Claude Code permission mode: acceptEdits, default, plan, dontAsk, auto, bypassPermissions "
        "(default: IB_PERMISSION_MODE, or the role's IB_MANAGER_/IB_WORKER_PERMISSION_MODE)",
    ),
    prompt_file: str = typer.Option(None, help="read the goal from this file"),
    project: str = typer.Option(None, help="project the agent belongs to (default: the repository's name)"),
    task: str = typer.Option(
        None,
        "--task",
        help="give it this task: claimed for it if ready; its title and body are the default goal",
    ),
    on: str = typer.Option(None, "--on", help="the machine (worker id) to run it on (default: this one)"),
    cli: str = typer.Option(
        None, "--cli", help="the agent program: claude, codex or gemini (default: IB_DEFAULT_CLI, claude)"
    ),
) -> None:
    """Spawn an agent in its own worktree and tmux session; prints its id.

    Example: ib new-agent "add a --verbose flag to the CLI" --name verbose-flag --on build-box
    """
    ctx = Context()
    command = new_agent_command(
        ctx,
        goal,
        name=name,
        manager=manager,
        worker=worker,
        no_worktree=no_worktree,
        model=model,
        permission_mode=permission_mode,
        prompt_file=prompt_file,
        project=project,
        task=task,
        cli=cli,
    )
    print(spawn(ctx, command, on, _print_note))


def new_agent_command(
    ctx: Context,
    goal: str,
    *,
    name: str | None = None,
    manager: str | None = None,
    worker: bool = False,
    no_worktree: bool = False,
    model: str | None = None,
    permission_mode: str | None = None,
    prompt_file: str | None = None,
    project: str | None = None,
    task: str | None = None,
    cli: str | None = None,
) -> NewAgent:
    """The `NewAgent` command `ib new-agent` (and the MCP tool `spawn`) sends, its values checked first."""
    from bus.commands.worker_commands import NewAgent
    from worker.agents.spawn import SpawnRequest, read_goal, requested_mode
    from worker.programs.registry import program

    if model is not None and not model.strip():
        raise typer.BadParameter(
            "must not be empty (leave --model out for the program's default)", param_hint="--model"
        )
    if name is not None:
        validate_id("agent", name)  # before the command, which reads an empty name as none given
    mode = requested_mode(permission_mode)
    if cli is not None:
        program(cli)  # an unknown name is refused here, before any machine is asked
    if not (goal or prompt_file) and task:
        text = ""  # the task's title and body are the goal (worker.tasks.assign)
    else:
        text = read_goal(SpawnRequest(goal, prompt_file=prompt_file))
    return NewAgent(
        goal=text,
        name=name,
        manager=manager,
        worker=worker,
        no_worktree=no_worktree,
        model=model,
        permission_mode=mode,
        project=project,
        task=task,
        caller=_caller(ctx),
        cli=cli,
    )


def spawn(ctx: Context, command: NewAgent, on: str | None, on_note: Callable[[str], None]) -> str:
    """Start the agent here, or on the worker `on`; its id."""
    if on and on != ctx.settings.worker_id:
        made = ctx.on_owner(command, on=on)
        return str(made.get("id") if isinstance(made, dict) else made)
    from worker.tasks.assign import new_agent_from_command

    return new_agent_from_command(ctx.runtime, command, on_note=on_note).id


def _print_note(note: str) -> None:
    print(f"ib new-agent: note: {note}", file=sys.stderr)


def list_cmd(as_json: bool = typer.Option(False, "--json", help="print JSON")) -> None:
    """List agents with their state.

    Example: ib list --json
    """
    from rich.markup import escape
    from rich.table import Table

    from bus.inbox.ages import format_age
    from worker.agents import views

    ctx = Context()
    agents = every_agent(ctx)
    rt = ctx.runtime
    if as_json:
        print(json.dumps(agent_rows(rt, agents), indent=2, ensure_ascii=False))
        return
    if not agents:
        console().print("no agents")
        return
    table = Table("id", "state", "role", "cli", "manager", "age", "goal", box=None)
    sessions = views.live_sessions(rt, agents)
    for a in agents:
        table.add_row(
            a.id,
            views.state_text(rt, a, sessions),
            a.role,
            a.cli,
            a.manager or "-",
            format_age(a.age),
            escape(views.first_line(a.goal, 50)),
        )
    console().print(table)


def every_agent(ctx: Context) -> list[Agent]:
    """Every agent on the bus; while the bus is down, the line that says which agents of this repository
    still run in tmux (they outlive it)."""
    import redis

    try:
        ctx.client.ping()
    except NoBusHere:
        raise
    except (BusUnavailable, redis.ConnectionError, redis.TimeoutError) as e:  # not a setting to fix
        from worker.cli.stopping import without_bus

        raise without_bus(ctx, str(e)) from None
    return ctx.runtime.agents.all()


def agent_rows(rt: Runtime, agents: list[Agent]) -> list[dict[str, Any]]:
    """`ib list --json`: each agent's record and its live state."""
    from worker.agents import views

    sessions = views.live_sessions(rt, agents)
    return [{**a.as_dict(), "state": views.live_state(rt, a, sessions)} for a in agents]


def tree() -> None:
    """Show managers with their workers below them."""
    from worker.agents import views

    for line in views.tree_lines(Context().runtime.agents.all()) or ["no agents"]:
        console().print(line, markup=False, highlight=False)


def info(
    agent_id: str = typer.Argument(..., help="agent id"),
    as_json: bool = typer.Option(False, "--json", help="one JSON object, for scripts"),
) -> None:
    """Everything about one agent: state, branch, worktree, and how to attach to its terminal."""
    from worker.agents import views
    from worker.agents.layout import AgentPaths
    from worker.programs.claude.sandbox import sandbox_line

    rt = Context().runtime
    agent = rt.agents.get(agent_id)
    if as_json:
        print(json.dumps(views.info_record(rt, agent)))
        return
    for line in views.info_lines(rt, agent):
        console().print(line, markup=False, highlight=False, soft_wrap=True)  # commands stay one line
    console().print(sandbox_line(AgentPaths(rt.root, agent.id).settings), markup=False, highlight=False)


def look(
    agent_id: str = typer.Argument(..., help="agent id"),
    lines: int = typer.Option(None, "--lines", "-n", min=1, help="the last N lines, scrollback included"),
    follow: bool = typer.Option(False, "--follow", "-f", help="keep showing new output until Ctrl-C"),
    png: str = typer.Option(None, "--png", help="write a PNG of the screen, with its colours, to this file"),
) -> None:
    """Show what the agent's terminal shows (or save a picture of it with --png).

    Example: ib look agent-1 --lines 100; ib look agent-1 --png agent-1.png
    """
    from bus.commands.worker_commands import Look, TakeScreenshot
    from worker.agents.talk import Screenshot

    ctx = Context()
    if png is not None:
        shot = ctx.on_owner(TakeScreenshot(agent=agent_id))
        _save_png(Screenshot(shot["agent"], shot["width"], shot["height"], b64decode(shot["png"])), png)
        return
    command = Look(agent=agent_id, lines=lines or None)
    text = str(ctx.on_owner(command))
    print(text.rstrip("\n"))
    if not follow:
        return
    try:
        previous = text
        while True:  # pane text cannot push: polling tmux is the only way
            time.sleep(0.5)
            current = str(ctx.on_owner(command))
            if current != previous:
                print("\033[2J\033[H" + current.rstrip("\n"), flush=True)
                previous = current
    except KeyboardInterrupt:
        return


def _save_png(shot: Screenshot, path: str) -> None:
    try:
        with open(path, "wb") as out:
            out.write(shot.png)
    except OSError as e:
        raise InvalidInput(f"cannot write {path}: {e.strerror or e}") from e
    print(f"{path}: {shot.width}×{shot.height} screen of {shot.agent}, {len(shot.png):,} bytes")


def send(
    agent_id: str = typer.Argument(..., help="agent id"),
    text: list[str] = typer.Argument(..., help="the message; words are joined with spaces; `-` reads stdin"),
    sender: str = typer.Option(None, "--from", help="the sending agent (default: the agent running this)"),
) -> None:
    """Type a message into an agent's session (verbatim, then Enter); `user` queues it for the person.

    Everything after the agent id is the text, also words that start with `-` (`--` before the text
    keeps even `--from` as text). An agent that shows a dialog gets nothing: the command says which
    dialog and what answers it (ib approve / deny / answer).

    To `user` (the person's primary session, shown in CLAUDE.md): "? ..." asks, "! ..." alerts,
    "COMPLETE: ..." / "DONE: ..." reports a finished job, anything else is a status update.
    Example: ib send agent-1 "run the tests again"
    """
    ctx = Context()
    message = sys.stdin.read() if text == ["-"] else " ".join(text)
    console().print(deliver(ctx, agent_id, message, sender))


def deliver(ctx: Context, agent_id: str, message: str, sender: str | None) -> str:
    """Type `message` into the agent's session, or queue it for the person (`user`); what was done."""
    from bus.commands.worker_commands import Send
    from worker.agents import talk, user_messages

    if agent_id in user_messages.USER_TARGETS:  # the person's primary session: see `ib messages`
        queued = user_messages.send_to_user(ctx.runtime, message, sender or _caller(ctx))
        return f"queued {queued.kind} message {queued.id} for the user"
    talk.check_text(message)  # before the agent is looked up: said first, not "no agent"
    ctx.on_owner(Send(agent=agent_id, text=message, sender=sender or _caller(ctx)))
    return f"sent to {agent_id}"


def status(agent_id: str = typer.Argument(..., help="agent id")) -> None:
    """The agent's commits and uncommitted changes."""
    from bus.commands.worker_commands import Status

    print(Context().on_owner(Status(agent=agent_id)))


def diff(
    agent_id: str = typer.Argument(..., help="agent id"),
    stat: bool = typer.Option(False, "--stat", help="a summary of changed files"),
) -> None:
    """Everything the agent's branch changed since it started."""
    from bus.commands.worker_commands import Diff

    print(Context().on_owner(Diff(agent=agent_id, stat=stat)), end="")


def log(
    message: list[str] = typer.Argument(..., help="what to write"),
    agent: str = typer.Option(None, help="whose log (default: the agent running this)"),
    quiet: bool = typer.Option(False, "--quiet", help="write only, print nothing"),
) -> None:
    """Write a timestamped line to an agent's log (agents use it for notes).

    Example: ib log "found 5 files to change"
    """
    from pathlib import Path

    from worker.agents import agent_log
    from worker.agents.layout import AgentPaths

    ctx = Context()
    who = agent or _caller(ctx)
    if not who:
        raise typer.BadParameter("not inside an agent: name one with --agent ID", param_hint="--agent")
    record = ctx.runtime.agents.get(who)
    text = " ".join(message)
    agent_log.append(AgentPaths(Path(record.root), record.id).log, text)
    if not quiet:
        console().print(text)


def kill(
    agent_id: str = typer.Argument(..., help="agent id"),
    force: bool = typer.Option(False, "--force", help="also when it has unmerged work; no graceful stop"),
) -> None:
    """Stop an agent without merging (archive kept in .ib/archive).

    Example: ib kill agent-1 --force
    """
    from bus.commands.worker_commands import Kill

    Context().on_owner(Kill(agent=agent_id, force=force))
    console().print(f"killed {agent_id}")


def esc(agent_id: str = typer.Argument(..., help="agent id")) -> None:
    """Press Escape in the agent's pane (interrupt what it is doing, as /esc does)."""
    from bus.commands.worker_commands import PressKeys

    Context().on_owner(PressKeys(agent=agent_id, keys=("Escape",)))
    console().print(f"Escape sent to {agent_id}")


def pause(agent_id: str = typer.Argument(..., help="agent id")) -> None:
    """Interrupt an agent and leave it waiting."""
    from bus.commands.worker_commands import Pause

    Context().on_owner(Pause(agent=agent_id))
    console().print(f"paused {agent_id}")


def resume(agent_id: str = typer.Argument(..., help="agent id")) -> None:
    """Let a paused agent go on, or restart a stopped agent's session with its conversation."""
    from bus.commands.worker_commands import Resume

    console().print(Context().on_owner(Resume(agent=agent_id)))


def merge(
    agent_id: str = typer.Argument(..., help="agent id"),
    into: str = typer.Option(None, "--into", help="target branch (default: the branch it started from)"),
) -> None:
    """Rebase the agent's branch onto the target, merge it, and close the agent.

    Example: ib merge agent-1 --into main
    """
    from bus.commands.worker_commands import Merge

    console().print(merged_line(Context().on_owner(Merge(agent=agent_id, into=into))))


def merged_line(done: dict[str, Any]) -> str:
    """What a merge did, in one line."""
    return (
        f"merged {done['agent']} into {done['target']} ({str(done['sha'])[:7]}, {done['commits']} commit(s))"
    )


def merge_check(
    agent_id: str = typer.Argument(..., help="agent id"),
    into: str = typer.Option(None, "--into", help="target branch"),
) -> None:
    """Tell whether the agent would merge cleanly now, changing nothing (exit 1 when it would conflict)."""
    from bus.commands.worker_commands import MergeCheck

    files = Context().on_owner(MergeCheck(agent=agent_id, into=into))
    if files:
        console().print("would conflict in:\n" + "\n".join(f"  - {f}" for f in files))
        raise typer.Exit(1)
    console().print("merges cleanly")


def nuke(
    agent_id: str = typer.Argument(None, help="an agent (with all its descendants); none: every agent"),
    yes: bool = typer.Option(False, "--yes", "-y", help="do not ask"),
) -> None:
    """Emergency stop: kill an agent and everything below it (on every machine), or all agents of this
    repository on this machine. With the bus down it still stops them all, found by their tmux sessions."""
    from bus.commands.worker_commands import Nuke
    from worker.cli.stopping import bus_problem, nuke_without_bus

    ctx = Context()
    problem = bus_problem(ctx)
    if problem is not None:
        nuke_without_bus(ctx, agent_id, yes, problem)
        return
    rt = ctx.runtime
    if (
        agent_id is None
        and not yes
        and sys.stdin.isatty()
        and not typer.confirm("Kill every agent of this repository?")
    ):
        raise typer.Exit(1)
    gone = ctx.on_owner(Nuke(), on=rt.worker_id) if agent_id is None else _nuke_tree(ctx, agent_id)
    console().print(f"nuked {len(gone)} agent(s): {', '.join(gone) or '-'}")


def _nuke_tree(ctx: Context, agent_id: str) -> list[str]:
    """Deepest first, each agent on its own worker; every worker is checked first, so a worker that is
    gone stops the nuke before anything is killed."""
    from bus.commands.worker_commands import Nuke
    from bus.commands.workers import require_alive

    rt = ctx.runtime
    doomed = [*rt.agents.descendants(agent_id), rt.agents.get(agent_id)]
    for worker in sorted({a.worker for a in doomed} - {rt.worker_id}):
        require_alive(rt.client, rt.keys, worker)
    for agent in doomed:
        ctx.on_owner(Nuke(agent=agent.id, tree=False))
    return [a.id for a in doomed]
