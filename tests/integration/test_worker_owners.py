"""Every worker reads every event; an event about another worker's agent is that worker's to handle. This
worker asks once whose agent it is (then remembers), opens no attention item for it, and acknowledges such
events together; an agent of its own, or one no worker owns, is handled as before. An agent that ends and
is made again is asked about again: the same id may come back on this worker. Real Redis, `ib worker
--once` (its consumer group reads what is pending, handles it, and returns)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import redis

from bus.inbox.attention import AttentionStore
from bus.stores.agent_store import Agent, AgentStore
from bus.wire.keys import Keys
from tests.cli import IbRunner
from tests.integration.test_bot import emit
from worker.service.owners import Owners


class CountingRedis(redis.Redis):
    """redis-py, unchanged, counting the HGETs of each key it sends alone, and the pipelines it makes."""

    hgets: list[str]
    pipelines: int = 0

    def execute_command(self, *args: Any, **options: Any) -> Any:
        if str(args[0]).upper() == "HGET":
            self.hgets.append(str(args[1]))
        send: Callable[..., Any] = super().execute_command
        return send(*args, **options)

    def pipeline(self, transaction: bool = True, shard_hint: Any = None) -> Any:
        self.pipelines += 1
        return super().pipeline(transaction, shard_hint)


def _agent(rds: redis.Redis, keys: Keys, agent_id: str, worker: str) -> None:
    AgentStore(rds, keys).save(
        Agent(id=agent_id, goal="g", state="running", state_at=time.time(), worker=worker)
    )


def test_another_workers_agent_is_asked_about_once_and_again_after_it_ends(
    redis_url: str, rds: redis.Redis, keys: Keys
) -> None:
    client = CountingRedis.from_url(redis_url, decode_responses=True)
    assert isinstance(client, CountingRedis)
    client.hgets = []
    _agent(rds, keys, "theirs", "w2")
    _agent(rds, keys, "mine", "w1")
    owners = Owners(AgentStore(client, keys), "w1")
    owners.refresh(["mine"])
    assert [owners.elsewhere("theirs", "state") for _ in range(5)] == [True] * 5
    assert owners.elsewhere("mine", "state") is False
    assert owners.elsewhere("nobody", "state") is False  # no record: handled, as every worker did
    assert client.hgets == [keys.agent("theirs"), keys.agent("nobody")]

    _agent(rds, keys, "theirs", "w1")  # ended there, made again here under the same name
    assert owners.elsewhere("theirs", "spawned") is False
    assert client.hgets.count(keys.agent("theirs")) == 2


def test_the_agents_of_a_batch_of_events_are_asked_about_together(
    redis_url: str, rds: redis.Redis, keys: Keys
) -> None:
    """A worker that starts on a busy bus meets thousands of other workers' agents at once: one read for
    the batch, not one per agent."""
    client = CountingRedis.from_url(redis_url, decode_responses=True)
    assert isinstance(client, CountingRedis)
    client.hgets = []
    theirs = [f"theirs-{n}" for n in range(50)]
    for agent_id in theirs:
        _agent(rds, keys, agent_id, "w2")
    _agent(rds, keys, "mine", "w1")
    owners = Owners(AgentStore(client, keys), "w1")
    owners.refresh(["mine"])
    owners.learn([*theirs, "mine", "nobody"])
    assert client.pipelines == 1
    assert all(owners.elsewhere(agent_id, "state") for agent_id in theirs)
    assert owners.elsewhere("mine", "state") is False
    assert client.hgets == []  # every one known from the batch's read
    assert owners.elsewhere("nobody", "state") is False  # no record: asked again, handled, as before
    owners.learn(theirs)
    assert client.pipelines == 1  # known: nothing asked


def test_the_owner_opens_the_attention_item_and_the_others_only_acknowledge(
    agents_ib: IbRunner, rds: redis.Redis, keys: Keys
) -> None:
    ib = agents_ib
    me = ib.env["IB_WORKER_ID"]
    _agent(rds, keys, "mine", me)
    _agent(rds, keys, "theirs", "elsewhere-w")
    assert ib.run("worker", "--once").returncode == 0  # its consumer group starts here
    emit(rds, keys, "permission", "theirs asks to use Bash: make", sender="theirs", agent="theirs")
    emit(rds, keys, "permission", "mine asks to use Bash: make", sender="mine", agent="mine")
    emit(rds, keys, "permission", "a session asks", sender="person", agent="no-record")
    done = ib.run("worker", "--once")
    assert done.returncode == 0, done.stderr
    opened = sorted(item.agent for item in AttentionStore(rds, keys).open_items())
    assert opened == ["mine", "no-record"]
    groups = {str(g["name"]): g for g in rds.xinfo_groups(keys.events)}
    assert groups[f"worker:{me}"]["pending"] == 0  # the event of the other's agent acknowledged too
