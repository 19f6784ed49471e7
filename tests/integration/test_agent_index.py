"""Each worker's agent index stays in step with the records through create, move and remove; an index that
came to disagree is repaired at the worker's start with one line in the log; bus data from before the
indexes gets them built once; a worker reads only its own agents, and a stopped worker's agents are marked
unreachable once."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
import redis

from bus.commands import workers
from bus.connection.clients import client_for
from bus.settings.settings import Settings
from bus.stores import agent_index
from bus.stores.agent_store import Agent, AgentStore
from bus.stores.hashes import members, write_hash
from bus.wire.keys import Keys
from tests.cli import init_repo
from tests.streams import stream_entries
from worker.runtime import Runtime
from worker.service.pane_watch import PaneWatcher
from worker.service.process import WorkerService


def _index(rds: redis.Redis, keys: Keys, worker: str) -> set[str]:
    return members(rds, keys.worker_agents(worker))


def _runtime(redis_url: str, namespace: str, tmp_path: Path, worker: str) -> Runtime:
    settings = Settings(
        redis_url=redis_url,
        namespace=namespace,
        worker_id=worker,
        tmux_socket=f"ib-test-none-{namespace.split(':')[1]}",  # no server: no panes
        status_node_auto=False,
        spool_dir=tmp_path / "spool",
    )
    return Runtime(settings, client_for(redis_url), init_repo(tmp_path / "repo"))


def _foreign(rds: redis.Redis, keys: Keys, count: int) -> None:
    """Agents of other workers whose records no reader could parse: whoever reads them fails at once."""
    store = AgentStore(rds, keys)
    for n in range(count):
        store.save(Agent(id=f"other-{n}", worker=f"w{n % 3}", state="waiting"))
        rds.hset(keys.agent(f"other-{n}"), "created_at", "not a number")


def test_the_index_follows_create_move_and_remove(rds: redis.Redis, keys: Keys) -> None:
    store = AgentStore(rds, keys)
    store.save(Agent(id="a", worker="w1"))
    store.save(Agent(id="b", worker="w1"))
    store.save(Agent(id="c", worker="w2"))
    assert (_index(rds, keys, "w1"), _index(rds, keys, "w2")) == ({"a", "b"}, {"c"})

    store.update("a", worker="w2")  # moved
    store.save(Agent(id="b", worker="w3"))  # saved again on another worker
    assert (_index(rds, keys, "w1"), _index(rds, keys, "w2"), _index(rds, keys, "w3")) == (
        set(),
        {"a", "c"},
        {"b"},
    )
    store.update("c", state="running")  # no move: the index is left as it is
    assert _index(rds, keys, "w2") == {"a", "c"}

    store.remove("c")
    assert (_index(rds, keys, "w2"), set(rds.smembers(keys.agents))) == ({"a"}, {"a", "b"})
    assert [a.id for a in store.of_worker("w2")] == ["a"]


def test_an_index_that_disagrees_is_repaired_at_start_with_one_line(
    redis_url: str,
    namespace: str,
    rds: redis.Redis,
    keys: Keys,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    store = AgentStore(rds, keys)
    store.save(Agent(id="mine", worker="w-me", state="waiting"))
    store.save(Agent(id="theirs", worker="w-other", state="waiting"))
    assert agent_index.build(rds, keys) == 2
    rds.sadd(keys.worker_agents("w-me"), "theirs", "gone")  # an id of another worker's, one without a record
    write_hash(rds, keys.agent("lost"), {"id": "lost", "worker": "w-me", "state": "waiting"})  # an old writer
    rds.sadd(keys.agents, "lost")
    assert [a.id for a in store.of_worker("w-me")] == ["mine"]  # read meanwhile: never another's

    rt = _runtime(redis_url, namespace, tmp_path, "w-me")
    with caplog.at_level(logging.WARNING, logger="worker.service.process"):
        WorkerService(rt, client_for(redis_url, blocking=True)).adopt()
    lines = [r.getMessage() for r in caplog.records if "agent index" in r.getMessage()]
    assert lines == [
        "worker w-me: its agent index disagreed with the records, repaired: added lost; dropped gone, theirs"
    ]
    assert _index(rds, keys, "w-me") == {"mine", "lost"}
    assert agent_index.repair(rds, keys, "w-me") == ([], [])  # in step now


def test_the_worker_repairs_again_only_after_a_while(
    redis_url: str, namespace: str, rds: redis.Redis, keys: Keys, tmp_path: Path
) -> None:
    service = WorkerService(
        _runtime(redis_url, namespace, tmp_path, "w-me"), client_for(redis_url, blocking=True)
    )
    service.repair_index(now=1000.0)
    rds.sadd(keys.worker_agents("w-me"), "stray")
    service.repair_index(now=1000.0 + 60)
    assert _index(rds, keys, "w-me") == {"stray"}
    service.repair_index(now=1000.0 + 301)
    assert _index(rds, keys, "w-me") == set()


def test_bus_data_from_before_the_index_gets_it_built_once(rds: redis.Redis, keys: Keys) -> None:
    for n, worker in enumerate(["w1", "w1", "w2", ""]):
        write_hash(rds, keys.agent(f"a{n}"), {"id": f"a{n}", "worker": worker, "state": "waiting"})
        rds.sadd(keys.agents, f"a{n}")
    assert not rds.exists(keys.agent_index)
    store = AgentStore(rds, keys)
    assert [a.id for a in store.of_worker("w1")] == ["a0", "a1"]
    assert rds.exists(keys.agent_index)
    assert (_index(rds, keys, "w1"), _index(rds, keys, "w2")) == ({"a0", "a1"}, {"a2"})
    assert agent_index.build(rds, keys) is None  # once


def test_the_watcher_reads_only_its_own_agents(
    redis_url: str, namespace: str, rds: redis.Redis, keys: Keys, tmp_path: Path
) -> None:
    _foreign(rds, keys, 300)
    store = AgentStore(rds, keys)
    for n in range(3):
        store.save(Agent(id=f"mine-{n}", worker="w-me", session=f"ib-none-{n}", state="waiting"))
    PaneWatcher(_runtime(redis_url, namespace, tmp_path, "w-me")).tick()  # no pane: its agents stopped
    assert {a.id: a.state for a in store.of_worker("w-me")} == {f"mine-{n}": "stopped" for n in range(3)}
    assert {rds.hget(keys.agent(f"other-{n}"), "state") for n in range(300)} == {"waiting"}


def test_a_restarted_worker_adopts_its_own_from_its_index(
    redis_url: str, namespace: str, rds: redis.Redis, keys: Keys, tmp_path: Path
) -> None:
    _foreign(rds, keys, 300)
    store = AgentStore(rds, keys)
    store.save(Agent(id="mine", worker="w-me", session="ib-none", state="running"))
    rt = _runtime(redis_url, namespace, tmp_path, "w-me")
    WorkerService(rt, client_for(redis_url, blocking=True)).adopt()  # its session is gone: stopped
    assert store.get("mine").state == "stopped"


def test_a_stopped_worker_makes_its_agents_unreachable_once(rds: redis.Redis, keys: Keys) -> None:
    store = AgentStore(rds, keys)
    for n in range(5):
        store.save(Agent(id=f"gone-{n}", worker="w-gone", state="waiting"))
    store.save(Agent(id="alive", worker="w-alive", state="running"))
    rds.sadd(keys.workers, "w-gone", "w-alive")
    rds.set(keys.worker("w-alive"), "x", ex=60)  # w-gone's heartbeat expired
    assert workers.sweep(rds, keys, 1000) == ["w-gone"]
    for _ in range(3):
        assert workers.sweep(rds, keys, 1000) == []
    told = [json.loads(f["e"]) for _i, f in stream_entries(rds, keys.events)]
    assert sorted(e["agent"] for e in told) == [f"gone-{n}" for n in range(5)]
    assert store.get("alive").state == "running"

    assert sorted(workers.come_back(rds, keys, "w-gone", 1000)) == [f"gone-{n}" for n in range(5)]
    assert {a.state for a in store.of_worker("w-gone")} == {"waiting"}


def test_a_worker_s_agents_are_read_fresh_and_parsed_only_when_changed(rds: redis.Redis, keys: Keys) -> None:
    """A worker reads its agents every tick: a record as the last read found it is the same record again,
    a changed one is read anew, a removed one is gone, one moved to another worker is not among them."""
    store = AgentStore(rds, keys)
    for n in range(3):
        store.save(Agent(id=f"a{n}", goal="g", worker="w1", created_at=float(n)))
    first = store.of_worker("w1")
    assert [a.id for a in first] == ["a0", "a1", "a2"]
    store.update("a1", state="running")
    store.remove("a2")
    rds.hset(keys.agent("a0"), "worker", "w2")  # a hand edit: the index still lists it (repaired later)
    again = store.of_worker("w1")
    assert [a.id for a in again] == ["a1"]
    assert again[0].state == "running" and again[0] is not first[1]
    assert store.of_worker("w1")[0] is again[0]  # unchanged: not parsed again
