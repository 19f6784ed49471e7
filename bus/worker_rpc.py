"""Commands for a worker, over the bus: `cmd:<worker>` carries requests, `reply:<id>` the answers.

The bot and other machines ask a worker to act on its agents this way; the worker runs the same
operation the CLI runs locally and pushes the result to the reply list, which expires on its own.
"""

from __future__ import annotations

import json
import uuid
from typing import Any, cast

import redis

from bus.errors import BusError, BusUnavailable
from bus.keys import Keys
from bus.workers import alive, require_alive

COMMAND_FIELD = "c"
REPLY_TTL = 300


class CommandFailed(BusError):
    """The worker ran the command and it failed; the message is the worker's one-line error."""


def worker_alive(client: redis.Redis, keys: Keys, worker: str) -> bool:
    return alive(client, keys, worker)


def submit(
    client: redis.Redis, keys: Keys, worker: str, op: str, args: dict[str, Any], sender: str = ""
) -> str:
    """Queue a command without waiting; returns its id. It waits in the stream if the worker is down."""
    command_id = uuid.uuid4().hex
    body = {"id": command_id, "op": op, "args": args, "from": sender}
    client.xadd(
        keys.commands(worker),
        {COMMAND_FIELD: json.dumps(body, ensure_ascii=False)},
        maxlen=10_000,
        approximate=True,
    )
    return command_id


def request(
    client: redis.Redis,
    keys: Keys,
    worker: str,
    op: str,
    args: dict[str, Any],
    timeout: float = 30.0,
    sender: str = "",
) -> Any:
    """Ask `worker` to run `op` and wait for its answer. A dead worker is refused at once, not queued
    (WorkerGone says when it was last seen), so nothing runs late behind the person's back."""
    require_alive(client, keys, worker)
    command_id = submit(client, keys, worker, op, args, sender)
    reply = client.blpop([keys.reply(command_id)], timeout=max(1, round(timeout)))
    if reply is None:
        raise BusUnavailable(f"worker {worker!r} did not answer {op} within {timeout:g}s")
    answer = json.loads(cast(list[str], reply)[1])
    if not answer.get("ok"):
        raise CommandFailed(str(answer.get("error") or "the command failed"))
    return answer.get("result")


def reply(
    client: redis.Redis, keys: Keys, command_id: str, ok: bool, result: Any = None, error: str = ""
) -> None:
    body = json.dumps({"ok": ok, "result": result, "error": error}, ensure_ascii=False, default=str)
    pipe = client.pipeline()
    pipe.rpush(keys.reply(command_id), body)
    pipe.expire(keys.reply(command_id), REPLY_TTL)
    pipe.execute()


def decode_command(fields: dict[str, str]) -> dict[str, Any] | None:
    """The command in a `cmd:<worker>` entry, or None when the entry is not one (see bus.dead_letters)."""
    try:
        raw = fields.get(COMMAND_FIELD, "")
        raw.encode("utf-8")  # bytes that are not UTF-8 come as lone surrogates (surrogateescape)
        body = json.loads(raw)
    except (ValueError, AttributeError, RecursionError):  # UnicodeEncodeError is a ValueError
        return None
    if (
        not isinstance(body, dict)
        or not isinstance(body.get("op"), str)
        or not isinstance(body.get("id"), str)
    ):
        return None
    if not isinstance(body.get("args"), dict):
        body["args"] = {}
    return body
