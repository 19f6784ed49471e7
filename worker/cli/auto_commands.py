"""`ib auto`: start a project's /auto loop on a worker and follow its events until it ends;
`ib auto stop | pause | status` read and change the loop's state (through its worker when it runs).
"""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Any, cast

import typer

from bus.errors import Conflict, InvalidInput, NotFound
from bus.events.envelope import Envelope, to_jsonl
from worker.cli.context import Context

if TYPE_CHECKING:
    import redis

    from bus.commands.worker_commands import AutoPause, AutoStop
    from bus.stores.auto_state import AutoState

ENDINGS = ("auto_finished", "auto_stopped", "auto_paused")
CONTROL_TIMEOUT = 30.0  # stopping or pausing a loop is quick; its start waits longer (AutoStart.timeout)

auto_app = typer.Typer(
    help="Run a project's tasks one after another with agents: claim, work, merge, next.",
    invoke_without_command=True,
)


@auto_app.callback(invoke_without_command=True)
def auto(
    typer_ctx: typer.Context,
    project: str = typer.Option(None, "--project", "-p", help="the project whose tasks to run"),
    worktrees: bool = typer.Option(False, "--worktrees", help="an agent and a worktree per task, merged"),
    max_tasks: int = typer.Option(0, "--max-tasks", min=0, help="stop after N tasks (0: all)"),
    agent: str = typer.Option(None, "--agent", help="without --worktrees: the agent to give the tasks to"),
    on: str = typer.Option(None, "--on", help="the machine (worker id) to run it on (default: this one)"),
    detach: bool = typer.Option(False, "--detach", "-d", help="start it and return"),
    as_json: bool = typer.Option(False, "--json", help="print the events as JSONL"),
) -> None:
    """Start (or resume) the /auto loop of a project and show its events until it ends.

    Example: ib auto --project backend --worktrees
    """
    from bus.connection.reconnect import Reconnect
    from bus.readers.follow import EventFilter, follow

    if typer_ctx.invoked_subcommand is not None:
        return
    ctx = Context()
    client = ctx.blocking_redis()
    last = cast(list[tuple[str, Any]], client.xrevrange(ctx.keys.events, count=1))
    since = str(last[0][0]) if last else "0"
    state = start_loop(ctx, client, project, worktrees, max_tasks, agent, on)
    if detach:
        print(started_line(state))
        return
    ended: list[Envelope] = []

    def show(event: Envelope) -> None:
        print(to_jsonl(event) if as_json else _line(event), flush=True)
        if event.get("type") in ENDINGS:
            ended.append(event)

    follow(
        client,
        ctx.keys,
        since=since,
        wanted=EventFilter(projects=[project]),
        emit=show,
        keep_going=lambda: not ended,
        reconnect=Reconnect(client, "ib auto", _say),  # the loop runs on in the worker across a failover
    )
    if ended[0].get("type") == "auto_paused":
        reason = (ended[0].get("data") or {}).get("reason", "")
        raise Conflict(f"auto mode paused for {project}: {reason}; `ib auto --project {project}` resumes it")


def start_loop(
    ctx: Context,
    client: redis.Redis,
    project: str | None,
    worktrees: bool,
    max_tasks: int,
    agent: str | None,
    on: str | None,
) -> AutoState:
    """Start (or resume) a project's loop on worker `on` (default: this machine's) and return its state
    once that worker has it; `client` blocks for the answer."""
    from bus.commands.worker_commands import AutoStart
    from bus.commands.worker_rpc import request
    from bus.commands.workers import validate_worker_id
    from bus.stores.auto_state import AutoState

    if not project:
        raise InvalidInput("which project? ib auto --project NAME [--worktrees] (see `ib task list`)")
    start = AutoStart(project=project, worktrees=worktrees, max_tasks=max_tasks, agent=agent)
    on = validate_worker_id(on) if on else ctx.settings.worker_id
    started = request(client, ctx.keys, on, start, wait=ctx.settings.write_wait)
    return AutoState.from_dict(started, source=f"worker {on}")


def started_line(state: AutoState) -> str:
    return f"auto mode {state.status} for {state.project} on worker {state.worker} ({state.summary})"


@auto_app.command("stop")
def stop(
    project: str = typer.Option(..., "--project", "-p", help="the project"),
    reason: str = typer.Option("", "--reason", help="why, for the record"),
) -> None:
    """End a project's /auto loop; the task in hand stays claimed and its agent keeps running."""
    from bus.commands.worker_commands import AutoStop

    state = _control(AutoStop(project=project, reason=reason))
    print(f"auto mode stopped for {project}" + (f"; {state.task} stays claimed" if state.task else ""))


@auto_app.command("pause")
def pause(
    project: str = typer.Option(..., "--project", "-p", help="the project"),
    interrupt: bool = typer.Option(False, "--interrupt", help="also press Escape in the loop's agent"),
) -> None:
    """Hold a project's /auto loop; `ib auto --project P` resumes it."""
    from bus.commands.worker_commands import AutoPause

    _control(AutoPause(project=project, interrupt=interrupt))
    print(f"auto mode paused for {project}; resume with: ib auto --project {project}")


@auto_app.command("status")
def status(
    project: str = typer.Option(None, "--project", "-p", help="one project (default: every loop)"),
    as_json: bool = typer.Option(False, "--json", help="print JSON"),
) -> None:
    """Show the /auto loops: status, the task in hand, how many tasks are done."""
    states = loop_states(Context(), project)
    if as_json:
        print(json.dumps([s.as_dict() for s in states], indent=2, ensure_ascii=False))
        return
    if not states:
        print(f"no auto loop for {project}" if project else "no auto loops")
    for s in states:
        print(status_line(s))


def loop_states(ctx: Context, project: str | None) -> list[AutoState]:
    """One project's loop (none when it has none), or every loop."""
    from bus.stores.auto_store import AutoStore

    store = AutoStore(ctx.client, ctx.keys)
    return [s for s in ([store.get(project)] if project else store.all()) if s is not None]


def status_line(s: AutoState) -> str:
    mode = "worktrees" if s.worktrees else f"agent {s.agent}"
    line = f"{s.project}: {s.status}, {s.phase} ({mode}, worker {s.worker}) — {s.summary}"
    if s.task:
        line += f"; task {s.task} with {s.merge_agent or s.task_agent}"
    return line + (f"; {s.reason}" if s.reason else "")


def _control(command: AutoStop | AutoPause) -> AutoState:
    """Through the loop's worker when it runs (so nothing races with it), else on Redis directly."""
    from bus.commands.worker_commands import AutoStop
    from bus.commands.worker_rpc import request, worker_alive
    from bus.stores.auto_state import AutoState
    from bus.stores.auto_store import AutoStore
    from worker.auto.loop import AutoLoops

    ctx = Context()
    state = AutoStore(ctx.client, ctx.keys).get(command.project)
    if state is None:
        raise NotFound(f"no auto loop for project {command.project} (see `ib auto status`)")
    if worker_alive(ctx.client, ctx.keys, state.worker):
        wait = ctx.settings.write_wait
        answer = request(ctx.blocking_redis(), ctx.keys, state.worker, command, CONTROL_TIMEOUT, wait=wait)
        return AutoState.from_dict(answer, source=f"worker {state.worker}")
    loops = AutoLoops(ctx.runtime)
    if isinstance(command, AutoStop):
        return loops.stop(command.project, command.reason)
    return loops.pause(command.project, "paused by the person")


def _say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def _line(event: Envelope) -> str:
    ts = str(event.get("ts") or "")[11:19]
    first, *more = str(event.get("msg") or "").splitlines() or [""]
    pad = " " * (len(ts) + 17)
    return f"{ts}  {event.get('type', ''):<15} {first}" + "".join(f"\n{pad}{line}" for line in more)
