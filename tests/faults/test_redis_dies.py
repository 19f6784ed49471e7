"""Redis dies in the middle of a storm of `ib notify` calls and Stop hooks (SIGTERM, then kill -9, with an
append-only file), and comes back; and Redis is down while 200 Stop hooks fire, then two flushers run at
once. Every message is counted: lost, or delivered twice."""

from __future__ import annotations

import json
import signal
import statistics
import subprocess
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.cli import IbRunner
from tests.faults.tally import Tally
from tests.redis_server import RedisServer
from tests.streams import stream_entries
from tests.waiting import retry_until

PRODUCERS, EACH = 4, 30


def _stop_payload(ib: IbRunner, text: str) -> str:
    return json.dumps({"session_id": "s", "cwd": str(ib.cwd), "last_assistant_message": f"{text}\nWAITING"})


def _send(ib: IbRunner, env: dict[str, str], text: str, hook: bool) -> subprocess.CompletedProcess[str]:
    if hook:
        return ib.run("hook", "stop", stdin=_stop_payload(ib, text), env={**env, "IB_AGENT_ID": "a-" + text})
    return ib.run("notify", text, env=env)


def _seen(server: RedisServer, namespace: str) -> list[str]:
    """The message key of every event in the stream: the notify text, or the hook's last message."""
    keys = []
    for _id, fields in stream_entries(server.client(), namespace + "events"):
        event = json.loads(fields["e"])
        last = event.get("data", {}).get("last_message")
        keys.append(last.split("\n")[0] if last else event["msg"])
    return keys


def _spooled_lines(spool: Path) -> int:
    return sum(len(p.read_text().splitlines()) for p in spool.glob("*.jsonl")) if spool.exists() else 0


@pytest.mark.timeout(240)
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL], ids=["sigterm", "kill-9"])
def test_redis_dies_during_a_notify_storm_with_hooks(
    ib: IbRunner, own_redis: RedisServer, tally: Tally, tmp_path: Path, sig: int
) -> None:
    env = {"IB_REDIS_URL": own_redis.url}
    sent: list[str] = []
    failures: list[str] = []
    lock = threading.Lock()

    def produce(n: int) -> None:
        for i in range(EACH):
            text = f"p{n}-{i}"
            with lock:
                sent.append(text)
            done = _send(ib, env, text, hook=i % 4 == 0)  # a quarter are Stop hooks
            if done.returncode != 0:
                failures.append(f"{text}: {done.stderr}")

    threads = [threading.Thread(target=produce, args=(n,)) for n in range(PRODUCERS)]
    for t in threads:
        t.start()
    client = own_redis.client()
    retry_until(lambda: client.xlen(ib.env["IB_NAMESPACE"] + "events") >= 25, 60, 0.01, "the storm to start")
    own_redis.stop(sig)
    retry_until(lambda: _spooled_lines(tmp_path / "spool") >= 12, 60, 0.01, "events spooled while down")
    own_redis.start()
    for t in threads:
        t.join()
    assert failures == []
    assert ib.run("spool", "--flush", env=env).returncode == 0
    seen = _seen(own_redis, ib.env["IB_NAMESPACE"])
    spooled = _spooled_lines(tmp_path / "spool")
    name = "Redis SIGTERM" if sig == signal.SIGTERM else "Redis kill -9"
    row = tally.count(
        f"{name} (AOF) during {PRODUCERS}×{EACH} notifies and Stop hooks",
        sent,
        seen,
        note=f"{spooled} spooled lines left after the flush",
    )
    assert (row.lost, row.twice, spooled) == (0, 0, 0)


@pytest.mark.timeout(240)
def test_redis_down_while_200_hooks_fire_then_two_flushers(
    ib: IbRunner, own_redis: RedisServer, tally: Tally, tmp_path: Path
) -> None:
    env = {"IB_REDIS_URL": own_redis.url}
    own_redis.stop()
    texts = [f"turn-{i:03d}" for i in range(200)]
    walls: list[float] = []

    def fire(text: str) -> int:
        started = time.monotonic()
        done = _send(ib, env, text, hook=True)
        walls.append(time.monotonic() - started)
        assert "kept in" in done.stderr, done.stderr
        return done.returncode

    with ThreadPoolExecutor(8) as pool:
        assert set(pool.map(fire, texts)) == {0}
    (spool_file,) = (tmp_path / "spool").glob("*.jsonl")
    kept = [
        json.loads(json.loads(x)["event"])["data"]["last_message"]
        for x in spool_file.read_text().splitlines()
    ]
    assert sorted(k.split("\n")[0] for k in kept) == texts

    own_redis.start()
    flushers = [ib.popen("spool", "--flush", env=env) for _ in range(2)]
    outs = [f.communicate(timeout=60) for f in flushers]
    assert [f.returncode for f in flushers] == [0, 0], outs
    seen = _seen(own_redis, ib.env["IB_NAMESPACE"])
    assert seen == [k.split("\n")[0] for k in kept]  # in the spool's order
    walls.sort()
    p50, p99 = statistics.median(walls), walls[int(len(walls) * 0.99) - 1]
    row = tally.count(
        "Redis down while 200 Stop hooks fire (8 at once), then two `ib spool --flush` at once",
        texts,
        seen,
        note=f"hook wall time (8 at once) p50 {p50:.2f} s, p99 {p99:.2f} s, max {walls[-1]:.2f} s",
    )
    assert (row.lost, row.twice) == (0, 0)
