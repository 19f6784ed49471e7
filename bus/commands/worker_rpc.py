"""Commands for a worker, over the bus: `cmd:<worker>` carries requests, `reply:<id>` the answers.

The bot and other machines ask a worker to act on its agents this way; the worker runs the same
operation the CLI runs locally and pushes the result to the reply list, which expires on its own.
On the stream a command is `{"id", "op", "args", "from"}` (bus.commands.command_wire): the command's tag,
its other fields as `args`, so entries queued by older versions decode as they are
(bus.commands.worker_commands has the models).

Both directions wait for the replicas (`wait`, bus.events.replication): a command the failover lost would
never run, though `submit` said it was queued; a reply it lost is the only record of an operation that ran and
must not run twice.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from typing import Any, cast

import redis

from bus.commands.command_wire import COMMAND_FIELD, COMMANDS_KEPT, entry, xadd
from bus.commands.worker_commands import BadCommand, Command, WorkerCommand, parse_command
from bus.commands.workers import alive, require_alive
from bus.errors import BusError, BusUnavailable
from bus.events.replication import NO_WAIT, Wait, commit, confirmed
from bus.wire.keys import Keys

REPLY_TTL = 300


class CommandFailed(BusError):
    """The worker ran the command and it failed; the message is the worker's one-line error, `reason` the
    failure's word for programs (bus.errors.BusError.reason), when it has one."""

    def __init__(self, message: str, reason: str = "") -> None:
        super().__init__(message)
        self.reason = reason


@dataclass(frozen=True)
class Received:
    """A command as it came off the stream: its id (where the answer goes) and who sent it."""

    id: str
    sender: str
    command: WorkerCommand


@dataclass(frozen=True)
class Refused:
    """An entry with an id to answer but a command that cannot run: `error` says why, in one line."""

    id: str
    sender: str
    op: str
    error: str


@dataclass(frozen=True)
class NotACommand:
    """An entry nobody can answer (not JSON, no id): it goes to the dead letters with `reason`."""

    reason: str


def worker_alive(client: redis.Redis, keys: Keys, worker: str) -> bool:
    return alive(client, keys, worker)


def encode_command(command_id: str, command: Command, sender: str = "") -> str:
    """The JSON of one stream entry. Pure."""
    return entry(command_id, command.op, command.model_dump(mode="json", exclude={"op"}), sender)


def submit(
    client: redis.Redis, keys: Keys, worker: str, command: Command, sender: str = "", wait: Wait = NO_WAIT
) -> str:
    """Queue a command without waiting for its answer; returns its id. It waits in the stream if the worker
    is down."""
    command_id = uuid.uuid4().hex
    body = encode_command(command_id, command, sender)
    if not wait[0]:
        client.xadd(keys.commands(worker), {COMMAND_FIELD: body}, maxlen=COMMANDS_KEPT, approximate=True)
        return command_id
    confirmed(client, [xadd(keys.commands(worker), body)], wait, f"command {command.op} for worker {worker}")
    return command_id


def request(
    client: redis.Redis,
    keys: Keys,
    worker: str,
    command: Command,
    timeout: float | None = None,
    sender: str = "",
    wait: Wait = NO_WAIT,
) -> Any:
    """Ask `worker` to run `command` and wait for its answer, up to `timeout` (default: the command's).
    A dead worker is refused at once, not queued (WorkerGone says when it was last seen), so nothing runs
    late behind the person's back."""
    patience = command.timeout if timeout is None else timeout
    require_alive(client, keys, worker)
    command_id = submit(client, keys, worker, command, sender, wait)
    reply = client.blpop([keys.reply(command_id)], timeout=max(1, round(patience)))
    if reply is None:
        raise BusUnavailable(f"worker {worker!r} did not answer {command.op} within {patience:g}s")
    answer = json.loads(cast(list[str], reply)[1])
    if not answer.get("ok"):
        raise CommandFailed(str(answer.get("error") or "the command failed"), str(answer.get("reason") or ""))
    return answer.get("result")


def reply(
    client: redis.Redis,
    keys: Keys,
    command_id: str,
    ok: bool,
    result: Any = None,
    error: str = "",
    wait: Wait = NO_WAIT,
    reason: str = "",
) -> None:
    answer = {"ok": ok, "result": result, "error": error} | ({"reason": reason} if reason else {})
    body = json.dumps(answer, ensure_ascii=False, default=str)
    pipe = client.pipeline()
    pipe.rpush(keys.reply(command_id), body)
    pipe.expire(keys.reply(command_id), REPLY_TTL)
    commit(client, pipe, wait, f"the reply to command {command_id}")


def decode_command(fields: dict[str, str]) -> Received | Refused | NotACommand:
    """What a `cmd:<worker>` entry holds: a command to run, one to refuse with a reply (a bad name or
    argument), or something nobody can answer (see bus.readers.dead_letters). Pure."""
    body = _json_object(fields.get(COMMAND_FIELD))
    if isinstance(body, NotACommand):
        return body
    command_id, sender, op = body.get("id"), body.get("from"), body.get("op")
    if not isinstance(command_id, str) or not command_id:
        return NotACommand("no command id (field 'id' must be a non-empty string)")
    sender = sender if isinstance(sender, str) else ""
    if not isinstance(op, str):
        return Refused(command_id, sender, "", "the entry names no command (field 'op' must be a string)")
    args = body.get("args")
    try:
        return Received(command_id, sender, parse_command(op, {} if args is None else args))
    except BadCommand as e:
        return Refused(command_id, sender, op, str(e))


def _json_object(raw: str | None) -> dict[str, Any] | NotACommand:
    if raw is None:
        return NotACommand(f"no {COMMAND_FIELD!r} field")
    try:
        raw.encode("utf-8")  # bytes that are not UTF-8 come as lone surrogates (surrogateescape)
        body = json.loads(raw)
    except UnicodeEncodeError:
        return NotACommand("not valid UTF-8")
    except (ValueError, RecursionError):
        return NotACommand("not JSON")
    if not isinstance(body, dict):
        return NotACommand(f"not a JSON object (a {type(body).__name__})")
    return body
