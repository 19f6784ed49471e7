"""What `WAIT 1` costs a publish behind Sentinel: the hooks' publish (light client, publish-once script)
through a primary with one replica and three sentinels on loopback, with and without waiting for the
replica, interleaved in one run. Each sample is one publish on a new connection, as a hook makes it
(asking a sentinel for the primary included). Then the same for a task change of the worker's (redis-py
through the sentinel pool, one connection kept): `TaskStore.add`, whose script and WAIT share a round trip.

    .venv/bin/python -m bench.sentinel_wait_bench            # 300 publishes of each
    IB_BENCH_RUNS=1000 .venv/bin/python -m bench.sentinel_wait_bench
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

from bench.common import summary_ms
from bus.connection.clients import client_for
from bus.events.envelope import make_event
from bus.events.publish import publish
from bus.settings.hotconf import HotConf
from bus.tasks.task_store import TaskStore
from bus.wire.keys import Keys
from tests.sentinel_servers import SentinelSet

RUNS = int(os.environ.get("IB_BENCH_RUNS", "300"))


def _conf(url: str, spool: str, replicas: int) -> HotConf:
    return HotConf(
        redis_url=url,
        namespace="ibbench:wait:",
        events_maxlen=100_000,
        connect_timeout=0.5,
        spool_dir=spool,
        max_message_bytes=1_048_576,
        listener_name="default",
        agent_id=None,
        root=None,
        wait_replicas=replicas,
        wait_ms=1000,
    )


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        deployment = SentinelSet(Path(folder) / "sentinel", replicas=1).start()
        try:
            url = deployment.url()
            confs = {n: _conf(url, str(Path(folder) / "spool"), n) for n in (0, 1)}
            samples: dict[int, list[float]] = {0: [], 1: []}
            spooled = 0
            for i in range(RUNS * 2):
                replicas = i % 2
                started = time.perf_counter()
                done = publish(confs[replicas], make_event("notify", f"bench {i}"))
                samples[replicas].append(time.perf_counter() - started)
                spooled += done.spooled_to is not None
            changes = _task_changes(url)
        finally:
            deployment.stop()
    print(f"Sentinel (1 replica, 3 sentinels, loopback), {RUNS} of each, {spooled} publishes spooled")
    print(f"  hook publish without WAIT: {summary_ms(samples[0])}")
    print(f"  hook publish with WAIT 1:  {summary_ms(samples[1])}")
    print(f"  task add without WAIT:     {summary_ms(changes[0])}")
    print(f"  task add with WAIT 1:      {summary_ms(changes[1])}")


def _task_changes(url: str) -> dict[int, list[float]]:
    """`TaskStore.add` timed with and without waiting for the replica, interleaved."""
    client = client_for(url)
    stores = {n: TaskStore(client, Keys("ibbench:wait:"), 100_000, wait=(n, 1000)) for n in (0, 1)}
    samples: dict[int, list[float]] = {0: [], 1: []}
    for i in range(RUNS * 2):
        replicas = i % 2
        started = time.perf_counter()
        stores[replicas].add(f"bench {i}", project="bench", task_id=f"t{i}")
        samples[replicas].append(time.perf_counter() - started)
    return samples


if __name__ == "__main__":
    main()
