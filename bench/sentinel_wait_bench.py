"""What `WAIT 1` costs a publish behind Sentinel: the hooks' publish (light client, publish-once script)
through a primary with one replica and three sentinels on loopback, with and without waiting for the
replica, interleaved in one run. Each sample is one publish on a new connection, as a hook makes it
(asking a sentinel for the primary included).

    .venv/bin/python -m bench.sentinel_wait_bench            # 300 publishes of each
    IB_BENCH_RUNS=1000 .venv/bin/python -m bench.sentinel_wait_bench
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

from bench.common import summary_ms
from bus.envelope import make_event
from bus.hotconf import HotConf
from bus.publish import publish
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
        finally:
            deployment.stop()
    print(f"Sentinel (1 replica, 3 sentinels, loopback), {RUNS} publishes each, {spooled} spooled")
    print(f"  without WAIT: {summary_ms(samples[0])}")
    print(f"  with WAIT 1:  {summary_ms(samples[1])}")


if __name__ == "__main__":
    main()
