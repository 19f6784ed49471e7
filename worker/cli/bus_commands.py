"""Commands about the bus itself: notify, listen, events, spool, bus status/start/stop, config."""

from __future__ import annotations

import json
import os
import signal
import sys
from types import FrameType
from typing import TYPE_CHECKING

import typer

from bus.connection.embedded import Embedded
from bus.connection.redis_url import NO_BUS_HERE
from bus.errors import BusUnavailable
from bus.events import spool
from bus.events.envelope import LISTEN_TYPES, Envelope
from bus.settings import defaults
from bus.wire.address import Address, masked_url, without_password
from bus.wire.names import name_problem, stream_id_problem
from bus.wire.resp import Connection
from worker.cli.context import Context
from worker.cli.output import console, emit_jsonl
from worker.cli.values import seconds

if TYPE_CHECKING:
    from rich.console import Console

    from bus.settings.settings import Settings

bus_app = typer.Typer(help="The embedded Redis bus: status, start, stop.", no_args_is_help=True)


def _shown() -> Console:
    """The bus commands' terminal: rich highlights the numbers and names in their figures."""
    return console(highlight=True)


def _split(values: list[str] | None) -> list[str]:
    return [part.strip() for value in values or [] for part in value.split(",") if part.strip()]


def notify(
    message: list[str] = typer.Argument(None, help="the message; `-` reads standard input"),
    sender: str = typer.Option(None, "--from", help="sender id (default: this worktree's agent)"),
    type_: str = typer.Option("complete", "--type", help="complete | waiting | question"),
    project: str = typer.Option(None, help="project the event belongs to"),
    task: str = typer.Option(None, help="task the event belongs to"),
) -> None:
    """Publish a complete / waiting / question event that wakes `ib listen`."""
    # `ib notify` is dispatched before typer loads (worker.cli.entry); this entry only documents it.
    from worker.hooks.notify import main

    args = [
        "--type",
        type_,
        *(["--from", sender] if sender else []),
        *(["--project", project] if project else []),
    ]
    raise typer.Exit(main([*args, *(["--task", task] if task else []), *(message or [])]))


def listen(
    timeout: float = typer.Option(
        None, callback=seconds, help="seconds to wait (default: IB_LISTEN_TIMEOUT, 570)"
    ),
    name: str = typer.Option(None, help="listener name (default: IB_LISTENER_NAME)"),
    types: list[str] = typer.Option(None, "--types", "--type", help="event types, comma-separated"),
) -> None:
    from bus.connection.reconnect import Reconnect
    from bus.readers.listener import TIMEOUT_MESSAGE, Listener, ListenerBusy

    chosen = _split(types)
    if types is not None and not chosen:
        raise typer.BadParameter("give at least one event type, e.g. complete,question", param_hint="--types")
    _check_name("listener name", name, "--name")
    ctx = Context()
    client = ctx.blocking_redis()
    listener = Listener(
        client,
        ctx.keys,
        ctx.settings.listener_name if name is None else name,
        frozenset(chosen or LISTEN_TYPES),
        heartbeat_ttl=ctx.settings.heartbeat_ttl,
        backlog_s=ctx.settings.listen_backlog,
        filtered=bool(chosen),
        reconnect=Reconnect(client, "ib listen", _say),
    )
    _exit_quietly_on_sigterm()

    def show(events: list[Envelope]) -> None:
        for event in events:
            emit_jsonl(event)

    try:
        printed = listener.run(ctx.settings.listen_timeout if timeout is None else timeout, show)
    except ListenerBusy as e:
        print(f"ib listen: {e}", file=sys.stderr)
        return
    if not printed:
        print(TIMEOUT_MESSAGE, flush=True)


listen.__doc__ = f"""Wait for events for the primary session, print them as JSONL, acknowledge, exit 0.

    By default it wakes for every end of a turn and everything that waits on you: {", ".join(LISTEN_TYPES)}.

    Example: ib listen --timeout 60 --types complete,question
    """


def events(
    project: list[str] = typer.Option(None, help="only these projects (repeatable)"),
    type_: list[str] = typer.Option(None, "--type", help="only these types (repeatable or comma-separated)"),
    since: str = typer.Option("now", help="`now`, `0` for everything kept, or a stream id"),
    group: str = typer.Option(None, help="read through this consumer group (ack after printing)"),
    dead: bool = typer.Option(False, "--dead", help="print the dead letters (unreadable entries) and exit"),
) -> None:
    """Follow the events stream as JSONL until interrupted.

    Example: ib events --project backend --type task_done --type merge_merged
    """
    from bus.connection.reconnect import Reconnect
    from bus.readers import dead_letters
    from bus.readers.follow import EventFilter, follow, follow_group

    if since not in ("now", "$") and stream_id_problem(since):
        raise typer.BadParameter(
            f"{since!r} is not `now`, `0` or a stream id like 1732560005123-0 (numbers up to 2^64-1)",
            param_hint="--since",
        )
    _check_name("group name", group, "--group")
    for values, hint in ((project, "--project"), (type_, "--type")):
        if values is not None and not _split(values):
            raise typer.BadParameter("is empty: name at least one, or leave the option out", param_hint=hint)
    ctx = Context()
    if dead:
        for row in dead_letters.listing(ctx.client, ctx.keys):
            print(json.dumps(row, ensure_ascii=False), flush=True)
        return
    wanted = EventFilter(frozenset(_split(project)), frozenset(_split(type_)))
    client = ctx.blocking_redis()
    again = Reconnect(client, "ib events", _say)
    _exit_quietly_on_sigterm()
    try:
        if group:
            follow_group(
                client,
                ctx.keys,
                group_name=group,
                since=since,
                wanted=wanted,
                emit=emit_jsonl,
                reconnect=again,
            )
        else:
            follow(client, ctx.keys, since=since, wanted=wanted, emit=emit_jsonl, reconnect=again)
    except KeyboardInterrupt:
        return


def _say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def _check_name(kind: str, value: str | None, option: str) -> None:
    problem = None if value is None else name_problem(kind, value)
    if problem:
        raise typer.BadParameter(problem, param_hint=option)


def spool_cmd(flush: bool = typer.Option(False, "--flush", help="send what waits now")) -> None:
    """Show the events kept locally while Redis was unreachable; --flush sends them.

    Example: ib spool --flush
    """
    ctx = Context()
    files = spool.pending(str(ctx.settings.spool_dir))
    if not files:
        _shown().print("spool is empty")
        return
    for item in files:
        shown = without_password(item.target)  # a spool of an older version may name it
        line = f"{item.events} event(s) for {shown} (namespace {item.namespace}) in {item.path}"
        _shown().print(line + (f", {item.damaged} damaged line(s)" if item.damaged else ""))
        if flush:
            sent = _flush_file(item, ctx.settings)
            _shown().print(f"  sent {sent}")


def _flush_file(item: spool.SpoolFile, settings: Settings) -> int:
    url = (
        Embedded(item.target.removeprefix("embedded:"), settings.embedded_port).ensure()
        if item.target.startswith("embedded:")
        else _secret_url(item.target, settings)
    )
    wait = (defaults.replicas_to_wait(settings.redis_wait_replicas, url), settings.redis_wait_ms)
    with Connection(Address.from_url(url), 2.0) as conn:
        folder = os.path.dirname(item.path)
        return spool.flush_file(conn, folder, item.target, item.namespace, settings.events_maxlen, wait)


def _secret_url(target: str, settings: Settings) -> str:
    """The URL, password and all, of the bus a spool file names without its password: this process's own
    IB_REDIS_URL when it is that bus (the spool never holds the secret, so no other can be known)."""
    if settings.redis_url and without_password(settings.redis_url) == without_password(target):
        return settings.redis_url
    if "****" not in target:  # no password in it, or an older version's file that held it
        return target
    raise BusUnavailable(
        f"the spool file for {target} is for another bus than this one's IB_REDIS_URL: "
        "run `ib spool --flush` where IB_REDIS_URL names it"
    )


@bus_app.command("status")
def bus_status() -> None:
    """Which Redis this repository uses and whether it answers.

    Example: ib bus status
    """
    ctx = Context()
    settings = ctx.settings
    root = settings.repository(ctx.cwd)
    if settings.redis_url:
        _shown().print(f"bus: {masked_url(settings.redis_url)} (IB_REDIS_URL)")
    elif root is None:
        raise BusUnavailable(NO_BUS_HERE)
    else:
        embedded = Embedded(str(root), settings.embedded_port)
        url = embedded.alive()
        stopped = "stopped (ib bus start starts it)" if embedded.stopped_on_purpose() else "not running"
        state = masked_url(url) if url else stopped
        _shown().print(f"bus: embedded, {state} (data in {embedded.folder})")
        _shown().print(embedded.port_line(), soft_wrap=True)
        if url is None:
            raise typer.Exit(3)
    client = ctx.client
    info = client.info("server")
    _shown().print(f"redis {info.get('redis_version')}, namespace {settings.namespace!r}")
    _shown().print(f"events kept: {client.xlen(ctx.keys.events) if client.exists(ctx.keys.events) else 0}")
    listeners = [k.removeprefix(ctx.keys.listener("")) for k in client.scan_iter(ctx.keys.listener("*"))]
    _shown().print(f"listeners alive: {', '.join(sorted(listeners)) or 'none'}")


@bus_app.command("start")
def bus_start() -> None:
    """Start the repository's embedded Redis (it also starts on first use)."""
    ctx = Context()
    if ctx.settings.redis_url:
        _shown().print(f"IB_REDIS_URL is set ({masked_url(ctx.settings.redis_url)}); nothing to start")
        return
    root = ctx.settings.repository(ctx.cwd)
    if root is None:
        raise BusUnavailable(NO_BUS_HERE)
    Embedded(str(root), ctx.settings.embedded_port).start()
    _shown().print(f"embedded bus at {masked_url(ctx.url)}")


@bus_app.command("stop")
def bus_stop() -> None:
    """Stop the repository's embedded Redis (its data stays on disk)."""
    from worker.cli.stopping import warn_running

    ctx = Context()
    if ctx.settings.redis_url:
        print(
            "ib bus stop: error: IB_REDIS_URL is set; ittybus did not start that server and will not stop it",
            file=sys.stderr,
        )
        raise typer.Exit(1)
    root = ctx.settings.repository(ctx.cwd)
    if root is None:
        print("ib bus stop: error: not inside a git repository", file=sys.stderr)
        raise typer.Exit(1)
    _shown().print("stopped" if Embedded(str(root)).stop() else "not running")
    warn_running(ctx, " without a bus (their events wait in the spool)")


def config(as_json: bool = typer.Option(False, "--json", help="print JSON")) -> None:
    """Print the effective settings and where each came from (secrets masked).

    Example: ib config
    """
    from rich.table import Table

    from bus.settings.settings import sources

    ctx = Context()
    rows = sources(ctx.settings, ctx.cwd)
    if as_json:
        print(json.dumps([{"setting": n, "value": v, "source": s} for n, v, s in rows], indent=2))
        return
    table = Table("setting", "value", "source", box=None)
    for row in rows:
        table.add_row(*row)
    _shown().print(table)


def _exit_quietly_on_sigterm() -> None:
    def stop(_signum: int, _frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)
