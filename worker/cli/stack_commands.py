"""`ib up`, `ib down`, `ib ps` and `ib watch`: the whole product on one machine, and its dashboard."""

from __future__ import annotations

import json
import logging
import os
import signal
import socket
import sys
import threading
import time
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any

import typer

from bus.connection.embedded import Embedded
from bus.errors import BusError, ConfigError
from bus.settings.repo_paths import ensure_state_dir
from worker.cli.context import Context
from worker.cli.output import console

if TYPE_CHECKING:  # the stack's modules load in the commands that run it, not for `ib --help`
    import redis

    from worker.frontends.dashboard import Dashboard
    from worker.runtime import Runtime
    from worker.service.supervisor import StackFiles
    from worker.service.supervisor_state import Probe, StackRecord


def bot_help() -> str:
    """What `ib up` prints when the bot is off: every setting the bot cannot start without."""
    from worker.service.supervisor_state import BOT_SETTINGS

    settings = f"{', '.join(BOT_SETTINGS[:-1])} and {BOT_SETTINGS[-1]}"
    return f"bot: off — set {settings} (in .env) to add the Telegram bot"


def _files(ctx: Context) -> StackFiles:
    from worker.service.supervisor import StackFiles

    return StackFiles(ctx.root)


def _bus_label(ctx: Context, url: str) -> str:
    from worker.service.supervisor_state import bus_label

    return bus_label(url, embedded=not ctx.settings.redis_url)


def resume_embedded(ctx: Context) -> None:
    """Start the embedded bus even after `ib bus stop` (a plain `ib` command would not)."""
    root = ctx.settings.repository(ctx.cwd)
    if not ctx.settings.redis_url and root is not None:
        Embedded(str(root), ctx.settings.embedded_port).start()


def up(
    detached: bool = typer.Option(False, "--detach", "-d", help="run in the background; `ib down` stops it"),
    watch: bool = typer.Option(True, "--watch/--no-watch", help="show the dashboard in this terminal"),
    background: bool = typer.Option(False, "--background", hidden=True, help="started by --detach"),
) -> None:
    """Run ittybus here: the bus, the worker, the bot and the dashboard.

    The bus is the repository's embedded Redis unless IB_REDIS_URL is set; the bot runs when
    IB_TELEGRAM_TOKEN is set. Ctrl-C (or q) stops the services; the agents keep running in tmux and
    `ib up` again re-adopts them. A service that crashes is restarted with backoff.

    Example: ib up
    """
    from bus.settings.secret_file import token_file_problem
    from bus.settings.telegram_setup import missing_telegram_settings
    from worker.frontends.dashboard import Dashboard
    from worker.service.supervisor import StackError, Supervisor, new_record, service_specs

    ctx = Context()
    files = _files(ctx)
    ensure_state_dir(str(files.root))  # and so /.env is kept out of git before the token is looked at
    resume_embedded(ctx)
    exposed = token_file_problem(ctx.cwd) if ctx.settings.telegram_token is not None else None
    if exposed:
        raise ConfigError(exposed)  # before any service starts: the bot would only crash on it
    missing = missing_telegram_settings(ctx.settings) if ctx.settings.telegram_token is not None else []
    if missing:  # the same: a bot that only crashes and restarts, its reason in a log nobody reads
        raise ConfigError(
            "the bot cannot start: " + "; ".join(missing) + " (or unset IB_TELEGRAM_TOKEN to run without it)"
        )
    if detached:
        _detach(ctx, files)
        return
    url = ctx.url  # starts the embedded bus when there is no IB_REDIS_URL
    settings, rt = ctx.settings, ctx.runtime
    with_bot = settings.telegram_token is not None
    record = new_record(_bus_label(ctx, url), settings.namespace, settings.worker_id, detached=background)
    supervisor = Supervisor(files, service_specs(rt.ib_command, with_bot, settings.web_port), record)
    dashboard = Dashboard(rt, ctx.blocking_redis(), record.bus, files) if watch and not background else None
    stop = threading.Event()
    _on_signals(stop, dashboard)  # before the first child starts: a SIGTERM must never orphan one
    _log_to(files, dashboard is not None)
    supervisor.claim()
    try:
        _no_other_worker(rt)
    except StackError:
        supervisor.stop()
        raise
    supervisor.start()
    console().print(f"bus: {record.bus} (namespace {settings.namespace})")
    for s in supervisor.current().services:
        if s.state != "off":
            console().print(f"{s.name}: pid {s.pid}, log {s.log}")
    if not with_bot:
        console().print(bot_help(), soft_wrap=True)
    try:
        if dashboard is not None:
            _show(dashboard)
        else:
            stop.wait()
    except KeyboardInterrupt:
        pass
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C must not cut the stopping short
        stopped = supervisor.stop()
        console().print(_farewell(rt, stopped))


def _no_other_worker(rt: Runtime) -> None:
    """Refuse to start a worker whose name a live worker holds (it would only crash and restart)."""
    from worker.service.supervisor import StackError, process_alive

    holder = str(rt.client.get(rt.keys.worker(rt.worker_id)) or "")
    if not holder:
        return
    host, _, pid = holder.partition(":")
    if host == socket.gethostname() and pid.isdigit() and not process_alive(int(pid)):
        return  # a worker that died here: ours takes its name over
    raise StackError(
        f"a worker named {rt.worker_id!r} is already running ({holder}): stop it, "
        "or set IB_WORKER_ID to run another"
    )


def _detach(ctx: Context, files: StackFiles) -> None:
    from worker.service.supervisor import detach, wait_until_up

    files.take_lock().close()  # refuse at once when a stack already runs here
    # said at once: the bus and the services may take seconds to answer on a loaded machine
    print("starting ittybus in the background (the bus, the worker and, if configured, the bot)…", flush=True)
    pid = detach(files, [str(Path(sys.executable).with_name("ib")), "up", "--background"])
    record = wait_until_up(files, pid)
    console().print(f"ittybus runs in the background (pid {pid}), bus {record.bus}")
    for s in record.services:
        console().print(
            f"  {s.name}: off ({s.note})" if s.state == "off" else f"  {s.name}: pid {s.pid}, log {s.log}",
            soft_wrap=True,
        )
    console().print("`ib ps` shows it, `ib watch` watches it, `ib down` stops it")


def _log_to(files: StackFiles, watch: bool) -> None:
    """The supervisor's own lines: into .ib/logs/stack.log under the dashboard, else on stderr."""
    logger = logging.getLogger("worker.service.supervisor")
    logger.setLevel(logging.INFO)
    files.logs.mkdir(parents=True, exist_ok=True)
    handler = logging.FileHandler(files.log_of("stack")) if watch else logging.StreamHandler()
    handler.setFormatter(logging.Formatter("%(asctime)s %(message)s"))
    logger.addHandler(handler)


def _on_signals(stop: threading.Event, dashboard: Dashboard | None) -> None:
    """`ib down` (SIGTERM) and a closed terminal (SIGHUP) stop the stack as Ctrl-C does."""

    def handle(_signum: int, _frame: FrameType | None) -> None:
        stop.set()
        if dashboard is not None:
            dashboard.stop()

    signal.signal(signal.SIGTERM, handle)
    signal.signal(signal.SIGHUP, handle)


def _show(dashboard: Dashboard) -> None:
    from rich.console import Console

    from worker.frontends.dashboard import keys_fd

    dashboard.start()
    if sys.stdout.isatty():
        dashboard.run_live(Console(), keys_fd(sys.stdin))
    else:
        dashboard.run_plain(sys.stdout)


def _farewell(rt: Runtime, stopped: list[str]) -> str:
    import redis

    try:
        sessions = set(rt.tmux.sessions())
        kept = [a for a in rt.agents.of_worker(rt.worker_id) if a.session in sessions]
    except (BusError, redis.RedisError):
        kept = []
    services = ", ".join(stopped) or "nothing"
    agents = "1 agent keeps running in tmux (`ib up` re-adopts it)"
    if len(kept) != 1:
        agents = f"{len(kept)} agents keep running in tmux" + (" (`ib up` re-adopts them)" if kept else "")
    return f"stopped {services}; {agents}; the bus keeps running"


def down(
    everything: bool = typer.Option(
        False, "--all", help="stop everything after a warning: the agents, the services and the embedded bus"
    ),
    yes: bool = typer.Option(False, "--yes", "-y", help="with --all: do not ask"),
) -> None:
    """Stop the services `ib up` runs here (detached or not). The agents and the bus keep running (a
    warning names the agents); `--all` stops them too.

    Example: ib down --all
    """
    from worker.cli.stopping import stop_everything, warn_running
    from worker.service.supervisor import stop_stack

    ctx = Context()
    if everything:
        stop_everything(ctx, yes)
        return
    files = _files(ctx)
    record = stop_stack(files)
    if record is None:
        console().print("ittybus is not running here (`ib up` starts it)")
    else:
        names = ", ".join(s.name for s in reversed(record.services) if s.state != "off")  # stopping order
        console().print(f"stopped {names} (supervisor pid {record.supervisor})")
    warn_running(ctx)  # names the agents that keep running, if any do


def ps(as_json: bool = typer.Option(False, "--json", help="print JSON")) -> None:
    """Show the services `ib up` runs here: pid, state, health, restarts. Exit 3 when none runs.

    Example: ib ps
    """
    from worker.service.supervisor import probe, process_alive, stale
    from worker.service.supervisor_state import ps_rows

    ctx = Context()
    record = _files(ctx).read()
    client = _client(ctx)
    running = record is not None and process_alive(record.supervisor)
    if record is not None and not running:
        record = stale(record)
    probes = probe(record, client) if record else {}
    if as_json:
        print(json.dumps(ps_json(record, probes, running, client is not None), indent=2))
    else:
        rows = ps_rows(record, probes, time.time()) if record else []
        _print_ps(ctx, record, rows, client is not None)
        if client is not None:
            from worker.cli.push_commands import session_lines

            print("\n".join(session_lines(client, ctx.keys, str(ctx.root), os.path.expanduser("~"))))
    if not running:
        raise typer.Exit(3)


def ps_json(record: StackRecord | None, probes: dict[str, Probe], running: bool, bus: bool) -> dict[str, Any]:
    from worker.service.supervisor_state import health

    services = []
    for s in record.services if record else ():
        services.append({**s.model_dump(mode="json"), "health": health(s, probes[s.name], time.time())})
    return {
        "running": running,
        "bus": bus,
        "supervisor": record.supervisor if record else None,
        "services": services,
    }


def _client(ctx: Context) -> redis.Redis | None:
    """The bus if it answers; `ib ps` never starts the embedded one."""
    import redis

    from bus.connection.clients import client_for, resolve_url

    try:
        client = client_for(resolve_url(ctx.settings, ctx.cwd, start=False), connect_timeout=1.0)
        client.ping()
    except (BusError, redis.RedisError):
        return None
    return client


def _print_ps(ctx: Context, record: StackRecord | None, rows: list[tuple[str, ...]], bus: bool) -> None:
    from worker.service.supervisor import process_alive
    from worker.service.supervisor_state import PS_HEADER, span, table_lines

    where = "embedded" if not ctx.settings.redis_url else "IB_REDIS_URL"
    print(f"bus: {where}, {'answers' if bus else 'not running'}")
    if record is None or not process_alive(record.supervisor):
        print("ittybus is not running here (`ib up` starts it)" + ("; as it was last:" if rows else ""))
        for s in record.services if record else ():
            if s.pid:
                print(
                    f"{s.name} (pid {s.pid}) was left running by a supervisor that died: `ib down` stops it"
                )
    else:
        kind = "in the background" if record.detached else "in a terminal"
        print(f"supervisor: pid {record.supervisor} {kind}, up {span(time.time() - record.started_at)}")
    if rows:
        print("\n".join(table_lines(PS_HEADER, rows)))
    for s in record.services if record else ():
        if s.state == "off" and s.note:
            print(f"{s.name}: {s.note}")


def watch(
    plain: bool = typer.Option(False, "--plain", help="print a plain snapshot on each change, no screen"),
) -> None:
    """The live dashboard: agents, tasks, merges, questions and events.

    Keys: a answer a question, s send to the selected agent, l look at it, ↑↓ select, q quit.
    When stdout is not a terminal it prints a plain snapshot whenever something changes.

    Example: ib watch
    """
    from worker.frontends.dashboard import Dashboard

    ctx = Context()
    dashboard = Dashboard(ctx.runtime, ctx.blocking_redis(), _bus_label(ctx, ctx.url), _files(ctx))
    _on_signals(threading.Event(), dashboard)
    try:
        if plain:
            dashboard.start()
            dashboard.run_plain(sys.stdout)
        else:
            _show(dashboard)
    except KeyboardInterrupt:
        return
