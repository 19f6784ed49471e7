"""Each worker's agent index (`worker-agents:<worker>`): the ids of the agents it owns, written in the same
step as each agent's record (bus/lua/agent_write.lua, agent_forget.lua), so a worker reads its own agents
without reading the whole bus. Bus data from before the indexes gets them built once; an index that came to
disagree with the records (a writer of an older version, a hand edit) is repaired by its worker.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import cast

import redis

from bus.wire.keys import Keys
from bus.wire.lua_source import lua

_MARK = "\x01"


def write(
    client: redis.Redis | redis.client.Pipeline,
    keys: Keys,
    agent_id: str,
    fields: Mapping[str, str],
    worker: str,
    save: bool,
) -> None:
    """Write an agent's fields; when `worker` is given, the agent is in that worker's index and no other's.
    A `save` also lists it in `agents` and makes the record lasting."""
    flat = [part for pair in fields.items() for part in pair]
    client.eval(
        lua("agent_write"),
        2,
        keys.agent(agent_id),
        keys.agents,
        keys.worker_agents(_MARK),
        agent_id,
        worker,
        "1" if save else "0",
        *flat,
    )


def forget(client: redis.Redis | redis.client.Pipeline, keys: Keys, agent_id: str) -> None:
    """Delete an agent's record and take it out of `agents` and of its worker's index."""
    client.eval(
        lua("agent_forget"), 2, keys.agent(agent_id), keys.agents, keys.worker_agents(_MARK), agent_id
    )


def build(client: redis.Redis, keys: Keys) -> int | None:
    """Build every worker's index from the records once (bus data from before the indexes); the number of
    agents indexed, or None when they were built already."""
    done = int(
        cast(
            int,
            client.eval(
                lua("agent_index_build"),
                2,
                keys.agents,
                keys.agent_index,
                keys.agent(_MARK),
                keys.worker_agents(_MARK),
            ),
        )
    )
    return None if done < 0 else done


def repair(client: redis.Redis, keys: Keys, worker: str) -> tuple[list[str], list[str]]:
    """Make `worker`'s index agree with the records: (ids added, ids dropped). One HGET per agent of the bus,
    in Redis."""
    build(client, keys)
    added, dropped = cast(
        list[list[str]],
        client.eval(
            lua("agent_index_repair"), 2, keys.agents, keys.worker_agents(worker), keys.agent(_MARK), worker
        ),
    )
    return sorted(str(i) for i in added), sorted(str(i) for i in dropped)
