"""A state change the pane watcher saw is written and told in one step (bus.events.streams.move_state): the
record moves only from the state the watcher read, so a hook that moved the agent in between keeps its
state and no `state` event says otherwise; an agent whose record is gone is not written back into being.
Real Redis, through the worker's own runtime."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest
import redis

from bus.errors import NotReplicated
from bus.settings.settings import Settings
from bus.stores.agent_store import Agent
from bus.wire.keys import Keys
from tests.streams import stream_entries
from worker.runtime import Runtime


def _runtime(redis_url: str, namespace: str, rds: redis.Redis, root: Path) -> Runtime:
    return Runtime(Settings(redis_url=redis_url, namespace=namespace, worker_id="w1"), rds, root)


def _told(rds: redis.Redis, keys: Keys) -> list[tuple[str, str]]:
    found = [json.loads(fields["e"]) for _id, fields in stream_entries(rds, keys.events)]
    return [(e["data"]["from_state"], e["data"]["to_state"]) for e in found if e["type"] == "state"]


def _move(rt: Runtime, agent_id: str, before: str, state: str) -> str | None:
    """As the pane watcher tells a move."""
    moved = {"from_state": before, "to_state": state}
    return rt.publish_move(
        agent_id, before, state, f"{agent_id}: {before} → {state}", data=moved, agent=agent_id
    )


def test_a_state_moves_only_from_the_one_read(
    redis_url: str, namespace: str, rds: redis.Redis, keys: Keys, tmp_path: Path
) -> None:
    rt = _runtime(redis_url, namespace, rds, tmp_path)
    rt.agents.save(Agent(id="a1", goal="g", worker="w1", state="waiting", state_at=time.time()))
    assert _move(rt, "a1", "waiting", "running") is not None
    assert rt.agents.state_of("a1")[:2] == ("running", "")
    assert _told(rds, keys) == [("waiting", "running")]

    rt.agents.set_state("a1", "complete", by="hook")  # a hook moves it after the watcher read "running"
    assert _move(rt, "a1", "running", "waiting") is None
    assert rt.agents.state_of("a1")[:2] == ("complete", "hook")
    assert _told(rds, keys) == [("waiting", "running")]  # nothing told of a move that did not happen


def test_a_removed_agent_is_not_written_back(
    redis_url: str, namespace: str, rds: redis.Redis, keys: Keys, tmp_path: Path
) -> None:
    rt = _runtime(redis_url, namespace, rds, tmp_path)
    assert _move(rt, "gone", "", "stopped") is None
    assert not rds.exists(keys.agent("gone"))
    assert _told(rds, keys) == []


def test_behind_replicas_the_move_waits_for_them(
    redis_url: str, namespace: str, rds: redis.Redis, keys: Keys, tmp_path: Path
) -> None:
    """With replicas to wait for (the default behind Sentinel) the script and its WAIT go together: here no
    replica holds it, which is said (NotReplicated), and the move stands on the primary."""
    settings = Settings(
        redis_url=redis_url, namespace=namespace, worker_id="w1", redis_wait_replicas=1, redis_wait_ms=50
    )
    rt = Runtime(settings, rds, tmp_path)
    rt.agents.save(Agent(id="a1", goal="g", worker="w1", state="waiting", state_at=time.time()))
    with pytest.raises(NotReplicated, match="0 of 1 replica"):
        _move(rt, "a1", "waiting", "running")
    assert rt.agents.state_of("a1")[0] == "running"
    assert _told(rds, keys) == [("waiting", "running")]


def test_a_resumed_agent_is_running_unless_its_turn_ended_meanwhile(
    redis_url: str, namespace: str, rds: redis.Redis, keys: Keys, tmp_path: Path
) -> None:
    """The limit's resume marks the agent running once its limit left the screen, seconds after it typed:
    a fast turn's end (its hook's `complete`) came first once under load, and `running` overwrote it."""
    rt = _runtime(redis_url, namespace, rds, tmp_path)
    rt.agents.save(Agent(id="a1", goal="g", worker="w1", state="limited", state_at=time.time()))
    assert rt.agents.set_state_if("a1", "limited", "running")
    assert rt.agents.state_of("a1")[0] == "running"
    rt.agents.set_state("a1", "complete", by="hook")
    assert not rt.agents.set_state_if("a1", "limited", "running")
    assert rt.agents.state_of("a1")[:2] == ("complete", "hook")


def test_a_resumed_agent_moves_on_while_other_fields_of_its_record_are_written(
    redis_url: str, namespace: str, rds: redis.Redis, keys: Keys, tmp_path: Path
) -> None:
    """Another field written between the state's read and its write (the transcript's tail, a detail) is no
    reason to leave the agent `limited`: it stayed so after its resume once, parked on nothing."""
    rt = _runtime(redis_url, namespace, rds, tmp_path)
    rt.agents.save(Agent(id="a1", goal="g", worker="w1", state="limited", state_at=time.time()))
    stop = threading.Event()

    def write_details() -> None:
        other = redis.Redis.from_url(redis_url, decode_responses=True)
        while not stop.is_set():
            other.hset(keys.agent("a1"), "detail", str(time.monotonic()))

    writer = threading.Thread(target=write_details)
    writer.start()
    try:
        moved = []
        for _ in range(200):
            rds.hset(keys.agent("a1"), "state", "limited")
            moved.append(rt.agents.set_state_if("a1", "limited", "running"))
    finally:
        stop.set()
        writer.join()
    assert all(moved) and rt.agents.state_of("a1")[0] == "running"
