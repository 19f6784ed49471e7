"""No ghost agents: a write to an agent's record that comes after its removal (a pane watcher's tick, a hook
firing as the pane dies) writes nothing, and a hash without an id (a reservation, or a ghost an older
ittybus left) is no agent to any reader. Before, `/shot sketcher` after `ib kill sketcher` answered "bad
Agent record: field 'id' is missing" when a state landed just after the kill."""

from __future__ import annotations

import json

import pytest
import redis

from bus.errors import NotFound
from bus.stores.agent_store import Agent, AgentStore
from bus.wire.agent_update import ID_FIELD, update_if_whole
from bus.wire.keys import Keys
from tests.cli import IbRunner


def test_writes_after_the_removal_leave_no_record(rds: redis.Redis, keys: Keys) -> None:
    store = AgentStore(rds, keys)
    store.save(Agent(id="sketcher", worker="w1", state="running"))
    assert store.set_state("sketcher", "waiting", by="hook") == "running"  # whole: written
    store.remove("sketcher")
    assert store.set_state("sketcher", "complete") is None  # the pane watcher's tick, after the kill
    store.update("sketcher", ending="killed")
    hook = rds.execute_command(*update_if_whole(keys.agent("sketcher"), {"state": "complete"}))  # a hook's
    assert (hook, rds.exists(keys.agent("sketcher"))) == (0, 0)
    assert store.find("sketcher") is None and store.all() == []


def test_the_script_s_id_field_is_the_record_s() -> None:
    assert Agent.hash_key("id") == ID_FIELD  # the light wire names it without loading the store


def test_a_hash_without_an_id_is_no_agent(rds: redis.Redis, keys: Keys, ib: IbRunner) -> None:
    store = AgentStore(rds, keys)
    store.save(Agent(id="kept", worker="w1", state="waiting"))
    rds.hset(keys.agent("ghost"), mapping={"state": "complete", "state_by": "hook"})  # an older ittybus's
    rds.sadd(keys.agents, "ghost")
    assert store.reserve("claimed", "w1") is None  # a spawn under way: its worker alone, no id yet
    assert store.find("ghost") is None and store.find("claimed") is None
    with pytest.raises(NotFound, match="no agent 'ghost'"):
        store.get("ghost")
    assert [a.id for a in store.all()] == ["kept"]
    assert store.set_state("claimed", "running") is None
    assert rds.hgetall(keys.agent("claimed")) == {"worker": "w1"}  # the reservation stays as it was
    listed = ib.run("list", "--json")
    assert listed.returncode == 0, listed.stderr
    assert [a["id"] for a in json.loads(listed.stdout)] == ["kept"]
