"""A frozen Redis (SIGSTOP) and a reply that never comes back: a send that timed out but did land is not
published again when its spooled copy is flushed, with and without a password.

The reply is held by a loopback relay between `ib` and a real redis-server: the command goes through
and runs, its answer does not, which is what a client sees when Redis freezes right after executing."""

from __future__ import annotations

import contextlib
import json
import signal
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from bus.connection.embedded import free_port
from tests.cli import IbRunner
from tests.faults.tally import Tally
from tests.redis_server import RedisServer
from tests.streams import stream_entries

NOTIFIES = 10


class ReplyHolder:
    """Relays one TCP port to Redis. While held, each connection gets its first reply (the hello: AUTH or
    PING) and no other: requests still go through and run."""

    def __init__(self, target_port: int) -> None:
        self.target_port, self.port = target_port, free_port()
        self.replies_flow = threading.Event()
        self.replies_flow.set()
        self._listener = socket.create_server(("127.0.0.1", self.port))
        threading.Thread(target=self._accept, daemon=True).start()

    def hold(self) -> None:
        self.replies_flow.clear()

    def release(self) -> None:
        self.replies_flow.set()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            server = socket.create_connection(("127.0.0.1", self.target_port))
            threading.Thread(target=self._pipe, args=(client, server, False), daemon=True).start()
            threading.Thread(target=self._pipe, args=(server, client, True), daemon=True).start()

    def _pipe(self, source: socket.socket, sink: socket.socket, replies: bool) -> None:
        passed = 0
        try:
            with contextlib.suppress(OSError):  # either end closed: the pipe ends
                while chunk := source.recv(65536):
                    if replies and passed and not self.replies_flow.is_set():
                        return  # this reply is never delivered: the client times out
                    sink.sendall(chunk)
                    passed += 1
        finally:
            for end in (source, sink):
                end.close()

    def close(self) -> None:
        self._listener.close()


def _messages(server: RedisServer, namespace: str) -> list[str]:
    return [json.loads(f["e"])["msg"] for _id, f in stream_entries(server.client(), namespace + "events")]


@pytest.fixture(params=[None, "fr0zen-pw"], ids=["no-password", "password"])
def frozen_redis(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[RedisServer]:
    server = RedisServer(tmp_path / "redis", password=request.param).start()
    yield server
    if server.process is not None:
        server.process.send_signal(signal.SIGCONT)
    server.stop()


def _url(server: RedisServer, port: int) -> str:
    auth = f":{server.password}@" if server.password else ""
    return f"redis://{auth}127.0.0.1:{port}/0"


def test_a_reply_lost_after_the_command_ran_is_not_published_twice(
    ib: IbRunner, frozen_redis: RedisServer, tally: Tally
) -> None:
    relay = ReplyHolder(frozen_redis.port)
    env = {"IB_REDIS_URL": _url(frozen_redis, relay.port), "IB_CONNECT_TIMEOUT": "0.5"}
    sent = []
    try:
        for i in range(NOTIFIES):
            relay.hold() if i % 2 == 0 else relay.release()
            done = ib.run("notify", f"held-{i}", env=env)
            assert done.returncode == 0, done.stderr
            if i % 2 == 0:  # held: it timed out and was spooled (a loaded machine may spool the others too)
                assert "kept in" in done.stderr, done.stderr
            sent.append(f"held-{i}")
        relay.release()
        flushed = ib.run("spool", "--flush", env=env)
        assert flushed.returncode == 0, flushed.stderr
    finally:
        relay.close()
    seen = _messages(frozen_redis, ib.env["IB_NAMESPACE"])
    kind = "with a password" if frozen_redis.password else "without a password"
    row = tally.count(
        f"F9 Redis ran the command, its reply lost (client timed out, spooled), {kind}",
        sent,
        seen,
        note="every other notify's reply held back; the spooled copies flushed: each appended once",
    )
    assert (row.lost, row.twice) == (0, 0)


def test_sigstopped_redis_doubles_nothing(ib: IbRunner, frozen_redis: RedisServer, tally: Tally) -> None:
    assert frozen_redis.process is not None
    env = {"IB_REDIS_URL": frozen_redis.url, "IB_CONNECT_TIMEOUT": "0.5"}
    sent = []
    for i in range(NOTIFIES):
        frozen_redis.process.send_signal(signal.SIGSTOP if i % 2 == 0 else signal.SIGCONT)
        done = ib.run("notify", f"frozen-{i}", env=env)
        assert done.returncode == 0, done.stderr
        sent.append(f"frozen-{i}")
    frozen_redis.process.send_signal(signal.SIGCONT)
    assert ib.run("spool", "--flush", env=env).returncode == 0
    seen = _messages(frozen_redis, ib.env["IB_NAMESPACE"])
    kind = "with a password" if frozen_redis.password else "without a password"
    row = tally.count(
        f"F9 Redis frozen (SIGSTOP) during every other notify, {kind}",
        sent,
        seen,
        note="the frozen ones time out after 0.5 s and are spooled; thawed, the spool is flushed",
    )
    assert (row.lost, row.twice) == (0, 0)
