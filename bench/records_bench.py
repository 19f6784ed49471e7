"""What the pydantic records (bus/stores/hash_record.py) cost beside the hand-written dataclasses they
replaced.

    .venv/bin/python -m bench.records_bench        # IB_BENCH_AGENTS=1000, IB_BENCH_ROUNDS=20

1. Conversion alone: 1,000 agent hashes to records and 1,000 records to hashes (the median of the rounds).
2. On Redis (`IB_BENCH_REDIS_URL`, a scratch namespace): saving 1,000 agents and reading them all back,
   as `ib list` and the worker's tick do (`AgentStore.all`).
3. Building the record class once (what importing the module pays).

The baseline is the `Agent` dataclass and its `from_hash` / `to_hash` as they were before the change, kept
inline here.
"""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, fields
from typing import Any

import redis

from bench.common import REDIS_URL, scratch_namespace
from bus.stores.agent_store import Agent, AgentStore
from bus.stores.hash_record import HashRecord
from bus.stores.hashes import members, read_hashes, write_hash
from bus.wire.keys import Keys

AGENTS = int(os.environ.get("IB_BENCH_AGENTS", "1000"))
ROUNDS = int(os.environ.get("IB_BENCH_ROUNDS", "20"))


@dataclass(frozen=True)
class OldAgent:
    """The record before bus/stores/hash_record.py, with its conversions as they were."""

    id: str
    goal: str = ""
    role: str = "manager"
    manager: str = ""
    project: str = ""
    task: str = ""
    root: str = ""
    worktree: str = ""
    branch: str = ""
    base_branch: str = ""
    session: str = ""
    worker: str = ""
    model: str = ""
    created_at: float = 0.0
    state: str = "creating"
    state_at: float = 0.0
    state_by: str = ""
    claude_session: str = ""
    transcript_path: str = ""
    paused: bool = False

    @classmethod
    def from_hash(cls, data: dict[str, str]) -> OldAgent:
        known = {f.name: f.type for f in fields(cls)}
        values: dict[str, object] = {}
        for name, raw in data.items():
            if name not in known:
                continue
            if name in ("created_at", "state_at"):
                values[name] = float(raw or 0)
            elif name == "paused":
                values[name] = raw == "1"
            else:
                values[name] = raw
        return cls(**values)  # type: ignore[arg-type]

    def to_hash(self) -> dict[str, str]:
        out: dict[str, str] = {}
        for name, value in asdict(self).items():
            out[name] = ("1" if value else "0") if isinstance(value, bool) else str(value)
        return out


def sample_hashes(n: int) -> list[dict[str, str]]:
    now = time.time()
    return [
        Agent(
            id=f"agent-{i:04d}",
            goal=f"Fix the flaky test number {i} in the payments service",
            role="worker" if i % 3 else "manager",
            manager="" if i % 3 == 0 else f"agent-{i - i % 3:04d}",
            project="payments",
            task=f"t-{i}",
            root="/home/dev/payments",
            worktree=f"/home/dev/payments/.ib/agents/agent-{i:04d}/repo",
            branch=f"ib/agent-{i:04d}",
            base_branch="main",
            session=f"ib-payments-agent-{i:04d}",
            worker="laptop",
            model="opus",
            created_at=now - i,
            state="running",
            state_at=now,
            state_by="hook",
            claude_session="0b7c6f1e-5a43-4a8e-9d0e-3f7e1b2c4d5e",
            transcript_path=f"/home/dev/.claude/projects/x/agent-{i:04d}.jsonl",
            paused=i % 10 == 0,
        ).to_hash()
        for i in range(n)
    ]


def median_ms(run: Callable[[], object], rounds: int = ROUNDS) -> float:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def row(what: str, old: float, new: float) -> None:
    print(f"  {what:<48} old {old:7.2f} ms   new {new:7.2f} ms   x{new / old:4.2f}")


def conversion(hashes: list[dict[str, str]]) -> None:
    print(f"conversion of {len(hashes)} agents (median of {ROUNDS} rounds)")
    row(
        "hash → record",
        median_ms(lambda: [OldAgent.from_hash(h) for h in hashes]),
        median_ms(lambda: [Agent.from_hash(h) for h in hashes]),
    )
    old = [OldAgent.from_hash(h) for h in hashes]
    new = [Agent.from_hash(h) for h in hashes]
    assert [asdict(o) for o in old] == [n.model_dump() for n in new]
    row(
        "record → hash",
        median_ms(lambda: [o.to_hash() for o in old]),
        median_ms(lambda: [n.to_hash() for n in new]),
    )
    row(
        "partial update of 3 fields (AgentStore.update)",
        median_ms(lambda: [_old_update(state="waiting", state_at=1.5, paused=False) for _ in hashes]),
        median_ms(lambda: [Agent.hash_fields(state="waiting", state_at=1.5, paused=False) for _ in hashes]),
    )


def _old_update(**changes: str | float | bool) -> dict[str, str]:
    return {k: ("1" if v else "0") if isinstance(v, bool) else str(v) for k, v in changes.items()}


def on_redis(hashes: list[dict[str, str]]) -> None:
    print(f"on Redis ({REDIS_URL}), {len(hashes)} agents (median of {ROUNDS} rounds)")
    client = redis.Redis.from_url(REDIS_URL, decode_responses=True)
    with scratch_namespace() as namespace:
        keys = Keys(namespace)
        store = AgentStore(client, keys)
        old = [OldAgent.from_hash(h) for h in hashes]
        new = [Agent.from_hash(h) for h in hashes]
        row(
            "save every agent (one pipeline)",
            median_ms(lambda: _old_save(client, keys, old)),
            median_ms(lambda: _new_save(store, new)),
        )
        row(
            "read them all (AgentStore.all, `ib list`)",
            median_ms(lambda: _old_all(client, keys)),
            median_ms(store.all),
        )
    client.close()


def _old_save(client: redis.Redis, keys: Keys, agents: list[OldAgent]) -> None:
    pipe = client.pipeline()
    for agent in agents:
        write_hash(pipe, keys.agent(agent.id), agent.to_hash())
        pipe.persist(keys.agent(agent.id))
        pipe.sadd(keys.agents, agent.id)
    pipe.execute()


def _new_save(store: AgentStore, agents: list[Agent]) -> None:
    pipe = store.client.pipeline()
    for agent in agents:  # AgentStore.save's commands, in one pipeline for all as the baseline's
        write_hash(pipe, store.keys.agent(agent.id), agent.to_hash())
        pipe.persist(store.keys.agent(agent.id))
        pipe.sadd(store.keys.agents, agent.id)
    pipe.execute()


def _old_all(client: redis.Redis, keys: Keys) -> list[OldAgent]:
    ids = sorted(members(client, keys.agents))
    found = read_hashes(client, [keys.agent(i) for i in ids])
    return sorted((OldAgent.from_hash(d) for d in found if d), key=lambda a: (a.created_at, a.id))


def class_build() -> None:
    print("building the record class once (median of 20)")
    row("define Agent", median_ms(_define_old, 20), median_ms(_define_new, 20))


def _define_old() -> Any:
    namespace: dict[str, Any] = {}
    annotations = {f.name: f.type for f in fields(OldAgent)}
    defaults = {f.name: f.default for f in fields(OldAgent) if f.default is not f.default_factory}
    body = {"__annotations__": annotations, **defaults, "__module__": __name__}
    namespace["cls"] = dataclass(frozen=True)(type("Rebuilt", (), body))
    return namespace["cls"]


def _define_new() -> Any:
    annotations = {name: info.annotation for name, info in Agent.model_fields.items()}
    defaults = {name: info.default for name, info in Agent.model_fields.items() if not info.is_required()}
    body = {"__annotations__": annotations, **defaults, "__module__": __name__}
    return type("Rebuilt", (HashRecord,), body)


def main() -> None:
    hashes = sample_hashes(AGENTS)
    conversion(hashes)
    on_redis(hashes)
    class_build()


if __name__ == "__main__":
    main()
