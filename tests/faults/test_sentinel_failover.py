"""The primary behind Sentinel is killed (`kill -9`) in the middle of a stream of `ib notify` calls and Stop
hooks; the sentinels promote a replica, and every event is on the new primary once: none lost (each was
confirmed by a replica with `WAIT`, or spooled and flushed by a later `ib` call), none twice (the
publish-once script, by the envelope's id). A redis-py client made before the kill (the worker's kind)
follows the failover to the new primary."""

from __future__ import annotations

import json
import signal
import statistics
import subprocess
import threading
import time
from collections import Counter
from pathlib import Path

import pytest
import redis

from bus.clients import client_for
from bus.envelope import EID_FIELD
from tests.cli import IbRunner
from tests.faults.tally import Tally
from tests.redis_server import RedisServer
from tests.sentinel_servers import SentinelSet
from tests.waiting import retry_until

PRODUCERS = 2
AFTER_FAILOVER = 12  # events sent to the new primary before the storm ends
MOST = 150  # a bound on each producer, should the failover never come


def _stop_payload(ib: IbRunner, text: str) -> str:
    return json.dumps({"session_id": "s", "cwd": str(ib.cwd), "last_assistant_message": f"{text}\nWAITING"})


def _send(ib: IbRunner, env: dict[str, str], text: str, hook: bool) -> subprocess.CompletedProcess[str]:
    if hook:
        return ib.run("hook", "stop", stdin=_stop_payload(ib, text), env={**env, "IB_AGENT_ID": "a-" + text})
    return ib.run("notify", text, env=env)


def _seen(server: RedisServer, namespace: str) -> tuple[list[str], Counter[str]]:
    """The message key of every event in the stream (the notify text, or the hook's last message), and
    how often each envelope id is there."""
    keys, ids = [], Counter[str]()
    for _id, fields in server.client().xrange(namespace + "events"):
        event = json.loads(fields["e"])
        last = event.get("data", {}).get("last_message")
        keys.append(last.split("\n")[0] if last else event["msg"])
        ids[event[EID_FIELD]] += 1
    return keys, ids


def _spooled_lines(spool: Path) -> int:
    return sum(len(p.read_text().splitlines()) for p in spool.glob("*.jsonl")) if spool.exists() else 0


@pytest.mark.timeout(120)
def test_the_primary_is_killed_mid_stream_and_a_replica_takes_over(
    ib: IbRunner, tally: Tally, tmp_path: Path
) -> None:
    deployment = SentinelSet(tmp_path / "sentinel", replicas=2).start()
    try:
        _storm_through_a_failover(ib, deployment, tally, tmp_path)
    finally:
        deployment.stop()


def _storm_through_a_failover(ib: IbRunner, deployment: SentinelSet, tally: Tally, tmp_path: Path) -> None:
    env = {"IB_REDIS_URL": deployment.url()}  # WAIT 1 is on by default behind Sentinel
    namespace = ib.env["IB_NAMESPACE"]
    sent: list[str] = []
    failures: list[str] = []
    kept: list[str] = []  # sent while no primary answered: spooled, flushed by a later call
    walls: dict[str, list[float]] = {"before": [], "after": []}
    phase = {"now": "before"}
    enough = threading.Event()
    lock = threading.Lock()

    def produce(n: int) -> None:
        for i in range(MOST):
            if enough.is_set():
                return
            text = f"p{n}-{i}"
            with lock:
                sent.append(text)
                when = phase["now"]
            started = time.monotonic()
            done = _send(ib, env, text, hook=i % 4 == 0)  # a quarter are Stop hooks
            walls[when].append(time.monotonic() - started)
            if done.returncode != 0:
                failures.append(f"{text}: {done.stderr}")
            if "kept in" in done.stderr:
                kept.append(text)

    heavy = client_for(deployment.url())  # the worker's kind of client, made before the failover
    threads = [threading.Thread(target=produce, args=(n,)) for n in range(PRODUCERS)]
    for t in threads:
        t.start()
    try:
        retry_until(lambda: heavy.xlen(namespace + "events") >= 10, 30, 0.01, "the stream to start")
        deployment.primary.stop(signal.SIGKILL)
        killed_at = len(sent)
        promoted = retry_until(deployment.promoted, 30, 0.1, "a replica to be promoted")
        with lock:
            phase["now"], promoted_at = "after", len(sent)
        retry_until(lambda: len(sent) >= promoted_at + AFTER_FAILOVER, 30, 0.05, "events after the failover")
    finally:
        enough.set()
        for t in threads:
            t.join()
    assert failures == []
    assert ib.run("spool", "--flush", env=env).returncode == 0
    seen, ids = _seen(promoted, namespace)
    spooled = _spooled_lines(tmp_path / "spool")
    row = tally.count(
        f"Sentinel failover mid-stream: primary kill -9 in {PRODUCERS} streams of notifies and Stop hooks",
        sent,
        seen,
        note=f"{len(sent) - killed_at} sent after the kill, {len(kept)} of them spooled during the failover, "
        f"{spooled} spooled lines left after the flush; "
        f"call wall time p50 {_p50(walls['before'])} s before the kill, {_p50(walls['after'])} s after",
    )
    assert (row.lost, row.twice, spooled) == (0, 0, 0)
    assert max(ids.values()) == 1
    retry_until(
        lambda: _length(heavy, namespace) == len(seen), 30, 0.1, "the heavy client to follow the failover"
    )
    assert kept, "no call fell in the failover: the test did not test it"


def _length(client: redis.Redis, namespace: str) -> int | None:
    """The events stream's length as `client` reads it, or None while it finds no primary."""
    try:
        return client.xlen(namespace + "events")
    except redis.ConnectionError:
        return None


def _p50(walls: list[float]) -> str:
    return f"{statistics.median(walls):.2f}" if walls else "-"
