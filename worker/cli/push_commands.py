"""`ib ack` and what `ib ps` says about the person's sessions: the events pushed into their inboxes."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import typer

from bus.inbox import push_store
from worker.cli.context import Context

if TYPE_CHECKING:
    import redis

    from bus.wire.keys import Keys


def ack(
    ids: list[str] = typer.Argument(None, help="event ids (as a pushed message names them)"),
    every: bool = typer.Option(False, "--all", help="every pending event"),
) -> None:
    """Acknowledge events pushed into your session, so they are not pushed into the next one. Without
    ids: list what is pending. Acting on an agent (ib approve, answer, look, diff, merge…) acknowledges
    its events by itself, and so does `ib listen` printing them.

    Example: ib ack 1732560005123-0    ib ack --all
    """
    ctx = Context()
    pending = push_store.pending(ctx.client, ctx.keys)
    if every:
        ids = [p.event_id for p in pending]
    if not ids:
        for item in pending:
            print(f"{item.event_id}  {item.line}")
        print(f"{len(pending)} event(s) pending" if pending else "nothing pending")
        return
    known = {p.event_id for p in pending}
    unknown = [i for i in ids if i not in known]
    done = push_store.acknowledge(ctx.client, ctx.keys, [i for i in ids if i in known])
    print(f"acknowledged {done} event(s)")
    if unknown:
        print(f"not pending (already acknowledged, or no such event): {' '.join(unknown)}")


def session_lines(client: redis.Redis, keys: Keys, root: str, home: str) -> list[str]:
    """The person's sessions with an inbox, what is pending, and the sessions dropped lately. A session
    of this machine that exited or was killed is dropped here, as the pusher would at its next message;
    one in bypassPermissions is said with the setting that lets it take the messages."""
    from bus.inbox.session_inbox import this_host
    from bus.inbox.session_socket import stale

    lines = []
    for s in push_store.sessions(client, keys):
        why = stale(s.socket, s.pid) if s.host == this_host() else None
        if why:
            push_store.drop(client, keys, s, why)
            continue
        lines.append(f"session {s.session_id}: pid {s.pid}, {s.cwd}, inbox {s.socket}")
        if s.mode == "bypassPermissions":
            lines.append(held_line(s.session_id, root, home))
    count = sum(line.startswith("session ") for line in lines)
    waiting = len(push_store.pending(client, keys))
    lines.append(f"sessions with an inbox: {count or 'none'}; events pending for them: {waiting}")
    lines += push_store.dropped(client, keys)[:5]
    return lines


def held_line(session_id: str, root: str, home: str) -> str:
    """What `ib ps` says of a session in bypassPermissions: Claude Code holds what is pushed behind a
    dialog unless the person's settings accept messages from other sessions (never written for them)."""
    from worker.programs.claude.settings import INBOUND_SETTING, persons_inbound

    found = persons_inbound(root, home)
    if found is not None and found[0] == "accept":
        return f"  (bypassPermissions; {found[1]} says {INBOUND_SETTING}: accept, so it takes them at once)"
    now = f" ({found[1]} says {found[0]!r})" if found else ""
    return (
        f"  session {session_id} runs in bypassPermissions: Claude Code holds each pushed message behind a "
        f'"Held message from another session" dialog{now}; to take them at once, add '
        f'"{INBOUND_SETTING}": "accept" to {os.path.join(home, ".claude", "settings.json")} (a '
        "repository's settings may only tighten it; ittybus does not write it for you)"
    )
