"""A running worker meets bad commands on its stream: each one with an id gets a one-line error reply,
the ones nobody can answer go to the dead letters, and the worker goes on serving good commands."""

from __future__ import annotations

import json
import signal
from collections.abc import Iterator
from subprocess import Popen

import pytest
import redis

from bus.commands.command_wire import COMMAND_FIELD
from bus.commands.worker_commands import Look, Nuke
from bus.commands.worker_rpc import CommandFailed, request
from bus.connection.clients import client_for
from bus.readers.dead_letters import listing
from bus.wire.keys import Keys
from tests.cli import IbRunner
from tests.waiting import retry_until

# (the entry's JSON, without its id; the reply's error)
REFUSED: dict[str, tuple[dict[str, object], str]] = {
    "unknown-op": ({"op": "fly", "args": {}}, "unknown command 'fly' (known: answer, approve, "),
    "missing": ({"op": "send", "args": {"agent": "a1"}}, "send: the argument 'text' is missing"),
    "wrong-type": (
        {"op": "look", "args": {"agent": "a1", "lines": "ten"}},
        "look: the argument 'lines' is wrong: input should be a valid integer (got 'ten')",
    ),
    "unknown-argument": (
        {"op": "kill", "args": {"agent": "a1", "colour": "red"}},
        "kill: there is no argument 'colour' (it takes: agent, force)",
    ),
    "args-a-list": ({"op": "nuke", "args": ["a1"]}, "nuke: its arguments must be a JSON object, not ['a1']"),
}
UNREADABLE = {
    b"\xff not UTF-8": "not a command: not valid UTF-8",
    b"send a1 hello": "not a command: not JSON",
    b'{"op": "nuke", "args": {}}': "not a command: no command id (field 'id' must be a non-empty string)",
}


@pytest.fixture
def worker(agents_ib: IbRunner, rds: redis.Redis, keys: Keys) -> Iterator[Popen[str]]:
    process = agents_ib.popen("worker")
    retry_until(lambda: rds.exists(keys.worker(agents_ib.env["IB_WORKER_ID"])), 30, what="the worker")
    yield process
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=15)


def test_bad_commands_get_one_line_errors_and_the_worker_goes_on(
    agents_ib: IbRunner, worker: Popen[str], redis_url: str, rds: redis.Redis, keys: Keys
) -> None:
    worker_id = agents_ib.env["IB_WORKER_ID"]
    stream = keys.commands(worker_id)
    raw = redis.Redis.from_url(redis_url)
    try:
        for raw_entry in UNREADABLE:
            raw.xadd(stream, {COMMAND_FIELD: raw_entry})
        for name, (body, _error) in REFUSED.items():
            rds.xadd(stream, {COMMAND_FIELD: json.dumps({"id": f"bad-{name}", "from": "test", **body})})
    finally:
        raw.close()

    for name, (_body, error) in REFUSED.items():
        answer = rds.blpop([keys.reply(f"bad-{name}")], timeout=30)
        assert answer is not None, f"no reply to {name}"
        reply = json.loads(answer[1])
        assert reply["ok"] is False and reply["error"].startswith(error), reply
        assert "\n" not in reply["error"] and "pydantic" not in reply["error"]

    # still serving: a command that works, and one that fails in its operation
    assert request(client_for(redis_url, blocking=True), keys, worker_id, Nuke(), timeout=30) == []
    with pytest.raises(CommandFailed, match="nobody"):
        request(client_for(redis_url, blocking=True), keys, worker_id, Look(agent="nobody"), timeout=30)

    dead = retry_until(lambda: listing(client_for(redis_url), keys), what="the dead letters")
    assert sorted(d["reason"] for d in dead) == sorted(UNREADABLE.values())
    assert {d["stream"] for d in dead} == {stream}
    assert worker.poll() is None
    worker.send_signal(signal.SIGTERM)
    assert worker.wait(timeout=15) == 0
    assert worker.stderr is not None and "Traceback" not in worker.stderr.read()
