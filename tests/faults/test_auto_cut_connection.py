"""An /auto step whose connection to Redis is cut under it (a Sentinel failover closes the connections to the
old primary mid-command; the next command finds the new one) is the bus's fault, not the step's: the loop
must not pause on it. The step stays first in the saved outbox and runs when the worker goes on
(`resume_all`). Nor may an event whose decision the cut kept from being saved be lost: it is fed again.

A real Redis behind a loopback relay that drops the connection a command comes in on, with redis-py's own
retries off, as the worker has them (bus.connection.reconnect)."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from bus.events.event_model import Event
from bus.settings.settings import Settings
from bus.stores.auto_state import AutoState
from bus.stores.auto_store import AutoStore
from bus.wire.keys import Keys
from tests.integration.test_auto_e2e import events
from worker.auto.decide import Publish, action_to_dict
from worker.auto.loop import AutoLoops
from worker.runtime import Runtime


class Relay:
    """Bytes both ways between clients and Redis; after `cut(marker)`, the next command that carries
    `marker` is dropped with its connection, so its client reads "Connection closed by server"."""

    def __init__(self, redis_url: str) -> None:
        parts = urlsplit(redis_url)
        self.upstream = (parts.hostname or "127.0.0.1", parts.port or 6379)
        self.database = parts.path or "/0"
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.marker = b""
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.listener.getsockname()[1]}{self.database}"

    def cut(self, marker: bytes) -> None:
        self.marker = marker

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            server = socket.create_connection(self.upstream)
            threading.Thread(target=self._pump, args=(client, server, True), daemon=True).start()
            threading.Thread(target=self._pump, args=(server, client, False), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket, commands: bool) -> None:
        try:
            while data := source.recv(65536):
                if commands and self.marker and self.marker in data:
                    self.marker = b""
                    break
                sink.sendall(data)
        except OSError:
            pass  # the other direction closed both
        for end in (source, sink):
            end.close()

    def close(self) -> None:
        self.listener.close()


@pytest.fixture
def relay(redis_url: str) -> Iterator[Relay]:
    running = Relay(redis_url)
    yield running
    running.close()


def _runtime(url: str, namespace: str, tmp_path: Path) -> Runtime:
    client = redis.Redis.from_url(url, decode_responses=True)
    client.set_retry(Retry(NoBackoff(), 0))
    settings = Settings(redis_url=url, namespace=namespace, worker_id="w1")
    return Runtime(settings, client, tmp_path)


def test_a_step_whose_connection_is_cut_runs_again_and_does_not_pause_the_loop(
    relay: Relay, namespace: str, rds: redis.Redis, keys: Keys, tmp_path: Path
) -> None:
    rt = _runtime(relay.url, namespace, tmp_path)
    store = AutoStore(rt.client, rt.keys)
    announce = Publish("auto_started", "Auto mode started for project cut")
    store.save(AutoState(project="cut", worker="w1"), [action_to_dict(announce)])
    loops = AutoLoops(rt)

    relay.cut(b"Auto mode started for project cut")  # the step's own command, not the loop's reads
    with pytest.raises(redis.ConnectionError):
        loops.resume_all()
    found = store.load("cut")
    assert found is not None
    state, outbox = found
    assert (state.status, state.reason) == ("running", "")
    assert outbox == [action_to_dict(announce)]
    assert rds.xlen(keys.events) == 0

    loops.resume_all()  # Redis answers again: the step runs, once
    found = store.load("cut")
    assert found is not None and found[0].status == "running" and found[1] == []
    assert [e["type"] for e in events(rds, keys)] == ["auto_started"]


def test_an_event_whose_decision_was_not_saved_is_fed_again(
    relay: Relay, namespace: str, rds: redis.Redis, keys: Keys, tmp_path: Path
) -> None:
    """The worker acknowledges an event as it reads it; an outage that cuts the loop's save short must not
    lose what the event meant (here t1 done, the loop moving on from it)."""
    rt = _runtime(relay.url, namespace, tmp_path)
    store = AutoStore(rt.client, rt.keys)
    working = AutoState(
        project="cut", worker="w1", phase="working", task="t1", task_agent="cut", taken=("t1",)
    )
    store.save(working, [])
    loops = AutoLoops(rt)
    done = Event(id="1893456000000-7", type="task_done", project="cut", task="t1", agent="cut")

    relay.cut(done.id.encode())  # the save of the decision, which carries the event's id as last_event
    with pytest.raises(redis.ConnectionError):
        loops.on_event(done)
    assert store.get("cut") == working  # nothing saved

    loops.resume_all()  # Redis answers again
    state = store.get("cut")
    assert state is not None and state.done == ("t1",) and state.last_event == done.id
    assert not loops.unfed

    loops.on_event(done)  # read again (a redelivery): decided on already, nothing happens twice
    assert store.get("cut") == state
