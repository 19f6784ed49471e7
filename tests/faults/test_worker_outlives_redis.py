"""The worker's inbox while its Redis restarts (SIGTERM, and kill -9): commands from another machine
(`ib send`, `ib new-agent --on`, through `cmd:<worker>`) sent before, read in flight as Redis went down,
and sent right after the restart while the worker still waits to reconnect, are each done once; the
worker keeps running and its log says it lost the bus, and that it is connected again, once each per
restart."""

from __future__ import annotations

import signal
import subprocess
import uuid
from pathlib import Path

import pytest

from bus.commands.command_wire import COMMAND_FIELD
from bus.commands.worker_commands import Send
from bus.commands.worker_rpc import encode_command
from bus.events.streams import consumer_name
from bus.wire.keys import Keys
from tests.cli import IB, IbRunner
from tests.faults.tally import Tally
from tests.redis_server import RedisServer, hung_up_on
from tests.waiting import retry_until

RESTARTS, EACH = 2, 4
KNOCKS = 3  # its tries to reach Redis again (half a second, then twice as long each time)


def _ok(done: subprocess.CompletedProcess[str]) -> None:
    assert done.returncode == 0, done.stderr


def _received(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


def _lost_in_flight(server: RedisServer, namespace: str, worker: str, pid: int, text: str) -> str:
    """A command the worker's consumer read, whose reply never reached the worker (Redis went down with
    it): appended and read in one transaction under the worker's consumer name, so the worker, blocked in
    its read, is not woken for it. It stays pending for the worker until the worker reads its own again."""
    stream, client = Keys(namespace).commands(worker), server.client()
    encoded = encode_command(uuid.uuid4().hex, Send(agent="a0", text=text), sender="test")
    pipe = client.pipeline(transaction=True)
    pipe.xadd(stream, {COMMAND_FIELD: encoded})
    pipe.xreadgroup(f"worker:{worker}", consumer_name(pid), {stream: ">"}, count=1)
    _id, read = pipe.execute()
    assert read, "the transaction read nothing"
    client.close()
    return text


def _typed(path: Path) -> list[str]:
    """What the test typed to agents (their first prompts aside), each line as the fake agent got it."""
    return [line for line in _received(path) if line.startswith(("before-", "after-"))]


@pytest.mark.timeout(300)
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL], ids=["sigterm", "kill-9"])
def test_worker_inbox_outlives_redis_restarts(
    agents_ib: IbRunner, own_redis: RedisServer, tally: Tally, tmp_path: Path, sig: int
) -> None:
    ib = agents_ib
    ib.env["IB_REDIS_URL"] = own_redis.url
    me = ib.env["IB_WORKER_ID"]
    elsewhere = {"IB_WORKER_ID": "w-other-machine"}  # so that every command goes through the inbox
    log = tmp_path / "worker.log"
    with log.open("wb") as out:
        worker = subprocess.Popen(
            [IB, "worker"], stdout=out, stderr=subprocess.STDOUT, env=ib.environ(), cwd=ib.cwd
        )
    heartbeat = f"{ib.env['IB_NAMESPACE']}worker:{me}"
    retry_until(lambda: own_redis.client().exists(heartbeat) or worker.poll() is not None, 60, 0.05, "worker")
    received = tmp_path / "received.txt"
    sent: list[str] = []
    agents: list[str] = []
    try:
        _ok(ib.run("new-agent", "--on", me, "--name", "a0", "Hello.\nfake: wait", env=elsewhere))
        agents.append("a0")
        for round_ in range(RESTARTS):
            _ok(ib.run("send", "a0", f"before-{round_}", env=elsewhere))
            sent.append(f"before-{round_}")
            sent.append(
                _lost_in_flight(own_redis, ib.env["IB_NAMESPACE"], me, worker.pid, f"before-lost-{round_}")
            )
            own_redis.stop(sig)
            with hung_up_on(own_redis.port) as knocks:  # away for a while: several tries to reconnect
                retry_until(lambda: knocks.count >= KNOCKS, 60, 0.05, "the worker to try again and again")
            own_redis.start()
            for i in range(EACH):  # the first ones wait in the stream until the worker is back
                text = f"after-{round_}-{i}"
                _ok(ib.run("send", "a0", text, env=elsewhere, timeout=120))
                sent.append(text)
            name = f"a{round_ + 1}"
            _ok(
                ib.run("new-agent", "--on", me, "--name", name, "Hi.\nfake: wait", env=elsewhere, timeout=120)
            )
            agents.append(name)
        retry_until(lambda: len(_typed(received)) >= len(sent), 60, 0.1, "every text typed")
        assert worker.poll() is None, log.read_text()
    finally:
        if worker.poll() is None:
            worker.send_signal(signal.SIGTERM)
            worker.wait(timeout=30)
    text = log.read_text()
    assert "Traceback" not in text, text
    assert text.count(f"worker {me}: lost the connection to Redis") == RESTARTS, text
    assert text.count(f"worker {me}: connected to Redis again") == RESTARTS, text
    listed = ib.run("list", "--json", env=elsewhere)
    _ok(listed)
    typed = _typed(received)
    name = "SIGTERM" if sig == signal.SIGTERM else "kill -9"
    row = tally.count(
        f"Redis restarted {RESTARTS}× ({name}, AOF) under the worker's inbox: `ib send` and "
        "`ib new-agent --on` from another worker id (`test_worker_outlives_redis.py`)",
        [*sent, *agents],
        [*typed, *(a for a in agents if f'"{a}"' in listed.stdout)],
        note=f"the worker kept running; {RESTARTS} commands read in flight as Redis went down, done after; "
        "one 'lost the connection' and one 'connected again' log line per restart",
    )
    assert (row.lost, row.twice) == (0, 0)
