"""The note a manager gets when one of its agents ends a turn: a `send` command on the stream of the
worker that owns the manager, wherever that machine is, which gives it as every agent's `ib send`: into
the manager's Claude Code inbox when it has one, else typed (never into an open dialog; see
worker.agents.agent_inbox). Fire and forget: the Stop hook waits for no answer.

While Redis is away the command waits in a file beside the spool, sent by the next Stop hook that
reaches Redis or by the worker's tick; its id makes the worker run it once however often it is sent.
Light: the hooks' RESP client, stdlib only.
"""

from __future__ import annotations

import fcntl
import os

from bus.commands import command_wire
from bus.wire import fastjson
from bus.wire.keys import Keys

TYPE_CHECKING = False  # typing costs milliseconds on the hooks' path; the checker still sees the types
if TYPE_CHECKING:
    from bus.settings.hotconf import HotConf
    from bus.wire.resp import Connection

NOTES_SUFFIX = ".notes"  # not `.jsonl`: the spool's listing (bus.events.spool.pending) reads those as events


def note_command(manager: str, text: str, sender: str) -> str:
    """A command-stream entry asking the manager's worker to give it `text` from agent `sender`
    (bus.commands.worker_commands.Send). Pure but for the fresh id."""
    return command_wire.entry(
        os.urandom(16).hex(), "send", {"agent": manager, "text": text, "sender": sender}, sender
    )


def tell(conn: Connection | None, conf: HotConf, manager: str | None, text: str, sender: str) -> None:
    """Send the notes that waited, then this one (none without a `manager`); keep it for later when
    Redis cannot take it."""
    from bus.errors import BusError

    line = (
        fastjson.dumps({"manager": manager, "command": note_command(manager, text, sender)})
        if manager
        else ""
    )
    if conn is not None:
        try:
            flush(conn, conf)
            if line:
                _deliver(conn, Keys(conf.namespace), line)
            return
        except BusError:
            pass  # Redis went away: kept below, sent later
    if line:
        _keep(notes_path(conf), line)


def flush(conn: Connection, conf: HotConf) -> int:
    """Send the notes that waited for this bus, in order; how many went out. A BusError leaves them all
    in the file: sent again later, the worker runs each command once (by its id)."""
    path = notes_path(conf)
    if not os.path.exists(path):
        return 0
    keys = Keys(conf.namespace)
    fd = os.open(path, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        with os.fdopen(os.dup(fd), "rb") as f:
            lines = [raw.decode("utf-8", "replace") for raw in f.read().splitlines() if raw.strip()]
        sent = sum(_deliver(conn, keys, line) for line in lines)
        os.ftruncate(fd, 0)
        return sent
    finally:
        os.close(fd)


def flush_waiting(conf: HotConf) -> int:
    """The worker's tick: send what waits, when anything does (no connection otherwise)."""
    path = notes_path(conf)
    if not (os.path.exists(path) and os.path.getsize(path)):
        return 0
    from bus.events.publish import open_bus

    with open_bus(conf, start=False) as conn:
        return flush(conn, conf)


def notes_path(conf: HotConf) -> str:
    """The file notes wait in for this bus: beside the bus's spool file."""
    from bus.events.publish import target_of
    from bus.events.spool import spool_path

    return (
        spool_path(str(conf.spool_dir), target_of(conf), conf.namespace).removesuffix(".jsonl") + NOTES_SUFFIX
    )


def _deliver(conn: Connection, keys: Keys, line: str) -> bool:
    """Put one kept note on its manager's worker's stream; False when no worker can type it (no such
    manager, a damaged line): dropped, as the event on the bus still says what happened."""
    try:
        item = fastjson.loads(line)
        manager, command = str(item["manager"]), str(item["command"])
    except (ValueError, KeyError, TypeError, SystemError):  # SystemError: see worker.hooks.pre_tool_use
        return False
    owner = conn.call("HGET", keys.agent(manager), "worker")
    if not isinstance(owner, bytes) or not owner:
        return False
    stream = keys.commands(owner.decode())
    conn.call(*command_wire.xadd(stream, command))
    return True


def _keep(path: str, line: str) -> None:
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        os.write(fd, (line + "\n").encode("utf-8"))
    finally:
        os.close(fd)
