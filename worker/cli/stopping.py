"""What `ib nuke`, `ib down` and `ib bus stop` do and say about the agents that run here, bus or no bus.

The agents live in tmux, not on the bus: while the bus is away they are found by their session names
(worker.agents.sessions_here), so the emergency stop always works and every stop warns about what keeps
running. `ib down --all` stops everything: the agents, the services `ib up` runs and the embedded bus.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import typer

from bus.connection.embedded import Embedded
from bus.errors import BusError
from worker.cli.context import Context

if TYPE_CHECKING:
    from worker.agents.sessions_here import SessionsHere


def bus_problem(ctx: Context) -> str | None:
    """Why the bus cannot be used now (never starting the embedded one), or None when it answers."""
    import redis

    try:
        ctx.client.ping()
    except (BusError, redis.RedisError) as e:
        return str(e)
    return None


def agents_here(ctx: Context) -> SessionsHere:
    from worker.agents.sessions_here import sessions_here
    from worker.tmux.client import Tmux

    return sessions_here(Tmux(ctx.settings.tmux_socket), ctx.root)


def running_warning(found: SessionsHere, why: str = "") -> str | None:
    """The warning for agents that keep running after a stop; None when none runs."""
    if not found.names:
        return None
    count = (
        "1 agent of this repository keeps"
        if len(found.names) == 1
        else f"{len(found.names)} agents of this repository keep"
    )
    return (
        f"warning: {count} running in tmux{why}: {', '.join(found.agents)}; "
        "`ib nuke` stops them, `ib down --all` stops everything"
    )


def without_bus(ctx: Context, problem: str) -> BusError:
    """The one line of a command that needs the bus while it is down: why, and which agents of this
    repository still run in tmux (they do not stop with the bus), with what brings the bus back."""
    found = agents_here(ctx)
    if found.names:
        running = (
            f"{len(found.names)} agent(s) of this repository still run in tmux: {', '.join(found.agents)} "
            "(`ib nuke` stops them)"
        )
    else:
        running = "no agent of this repository runs in tmux"
    return BusError(f"the bus is down ({problem}); {running}; `ib up` brings the bus back")


def warn_running(ctx: Context, why: str = "") -> None:
    line = running_warning(agents_here(ctx), why)
    if line is not None:
        print(line, file=sys.stderr)


def nuke_without_bus(ctx: Context, agent_id: str | None, yes: bool, problem: str) -> None:
    """The emergency stop while the bus is away: every agent session of this repository, by name."""
    from worker.agents.sessions_here import stop_sessions
    from worker.tmux.client import Tmux

    if agent_id is not None:
        print(
            f"ib nuke: error: the bus is down, so the agents below {agent_id} cannot be found ({problem}); "
            "`ib nuke` with no id stops every agent of this repository by its tmux session",
            file=sys.stderr,
        )
        raise typer.Exit(1)
    found = agents_here(ctx)
    if not found.names:
        why = found.problem or "no agent of this repository runs in tmux"
        print(f"nothing to stop: {why} (and the bus is down)")
        return
    ask = f"The bus is down: kill the {len(found.names)} agent session(s) of this repository in tmux?"
    if not yes and sys.stdin.isatty() and not typer.confirm(ask):
        raise typer.Exit(1)
    gone = stop_sessions(Tmux(ctx.settings.tmux_socket), found)
    print(
        f"nuked {len(gone)} agent(s) by their tmux sessions: {', '.join(gone) or '-'} (the bus is down: "
        "their records and work trees are kept; `ib list` shows them stopped once it is back)"
    )


def stop_everything(ctx: Context, yes: bool) -> None:
    """`ib down --all`: the services, then every agent of this repository, then the embedded bus."""
    from worker.service.supervisor import StackFiles, stop_stack

    root = ctx.root
    found = agents_here(ctx)
    embedded = not ctx.settings.redis_url
    doomed = [
        f"{len(found.names)} agent(s) ({', '.join(found.agents)}; unmerged work is thrown away)"
        if found.names
        else "",
        "the services `ib up` runs",
        "the embedded bus" if embedded else "",
    ]
    print(f"warning: this stops {_listed(doomed)} in {root}", file=sys.stderr)
    if not yes and sys.stdin.isatty() and not typer.confirm("Stop everything?"):
        raise typer.Exit(1)
    record = stop_stack(StackFiles(root))
    services = [s.name for s in reversed(record.services) if s.state != "off"] if record else []
    agents = _nuke_all(ctx) if found.names else []
    bus = embedded and Embedded(str(root)).stop()
    stopped = [
        f"{len(agents)} agent(s) ({', '.join(agents)})" if agents else "",
        *services,
        "the embedded bus" if bus else "",
    ]
    kept = "" if embedded else "; the bus at IB_REDIS_URL is not ittybus's to stop"
    print((f"stopped {_listed(stopped)}" if any(stopped) else "nothing was running here") + kept)


def _listed(parts: list[str]) -> str:
    named = [p for p in parts if p]
    return ", ".join(named[:-1]) + f" and {named[-1]}" if len(named) > 1 else "".join(named)


def _nuke_all(ctx: Context) -> list[str]:
    """Through the bus when it answers (records and work trees go too); then whatever still runs in tmux,
    by name (agents of another worker id here, or all of them while the bus is away)."""
    from bus.commands.worker_commands import Nuke
    from worker.agents.sessions_here import stop_sessions
    from worker.tmux.client import Tmux

    gone: list[str] = []
    if bus_problem(ctx) is None:
        gone = list(ctx.on_owner(Nuke(), on=ctx.runtime.worker_id))
    left = stop_sessions(Tmux(ctx.settings.tmux_socket), agents_here(ctx))
    return gone + [a for a in left if a not in gone]
