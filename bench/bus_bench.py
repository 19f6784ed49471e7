"""Benchmarks of the bus: every figure printed side by side with its baseline, in the same run.

    .venv/bin/python -m bench.bus_bench            # all three
    .venv/bin/python -m bench.bus_bench latency    # one of: latency, startup, throughput

1. Wake-up latency: event published → line printed by a waiting `ib listen`, beside the seed's design
   (a queue file polled every 2 s by a listener loop).
2. Process wall time of `ib notify` and `ib hook post-tool-use`, beside `python3 -c pass`.
3. Events/s through publish → consumer group → ack, beside `redis-benchmark` XADD on the same server.
"""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time

import redis

from bench.common import IB, REDIS_URL, ib_env, percentile, scratch_namespace, summary_ms
from bus.events.envelope import make_event
from bus.events.streams import Group, envelopes, publish
from bus.wire.keys import Keys

LATENCY_EVENTS = int(os.environ.get("IB_BENCH_EVENTS", "1000"))
ROTATION = 4  # listeners waiting at once, so a new one's start-up never sits inside a measurement


def wake_latency_ib(events: int) -> list[float]:
    """Each event goes to one already-waiting `ib listen` (its own type), which prints it and exits."""
    samples: list[float] = []
    with scratch_namespace() as ns, tempfile.TemporaryDirectory() as tmp:
        env = ib_env(ns, tmp)
        client = redis.Redis.from_url(REDIS_URL, decode_responses=True)
        keys = Keys(ns)

        def start(slot: int) -> subprocess.Popen[str]:
            return subprocess.Popen(
                [IB, "listen", "--timeout", "120", "--name", f"b{slot}", "--types", f"bench_{slot}"],
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                text=True,
                env=env,
            )

        def ready(slot: int) -> None:
            while not client.exists(keys.listener(f"b{slot}")):
                time.sleep(0.002)
            time.sleep(0.05)  # heartbeat is set just before the group read begins

        listeners = {slot: start(slot) for slot in range(ROTATION)}
        for i in range(events):
            slot = i % ROTATION
            ready(slot)
            proc = listeners[slot]
            sent = time.time()
            publish(client, keys, make_event(f"bench_{slot}", str(sent)), maxlen=100_000)
            assert proc.stdout is not None
            line = proc.stdout.readline()
            got = time.time()
            assert json.loads(line)["msg"] == str(sent), line
            samples.append(got - sent)
            proc.wait()
            listeners[slot] = start(slot)
        for proc in listeners.values():
            proc.kill()
            proc.wait()
        client.close()
    return samples


SEED_LISTENER = r"""
import os, sys, time
queue = sys.argv[1]
while True:
    if os.path.exists(queue) and os.path.getsize(queue) > 0:
        drain = queue + ".drain"
        os.rename(queue, drain)
        with open(drain) as f:
            sys.stdout.write(f.read())
        sys.stdout.flush()
        os.unlink(drain)
    time.sleep(2)
"""


def wake_latency_seed(events: int) -> list[float]:
    """The seed's design: `ib notify` appends to a queue file; the listener polls it every 2 s."""
    samples: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        queue = os.path.join(tmp, "queue")
        proc = subprocess.Popen(
            [sys.executable, "-c", SEED_LISTENER, queue], stdout=subprocess.PIPE, text=True
        )
        done = threading.Event()

        def read() -> None:
            assert proc.stdout is not None
            for line in proc.stdout:
                got = time.time()
                samples.append(got - float(json.loads(line)["msg"]))
                if len(samples) >= events:
                    done.set()
                    return

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        for _ in range(events):  # about 25 events a second, at random moments
            time.sleep(random.uniform(0, 0.08))
            with open(queue, "a") as f:
                f.write(json.dumps({"type": "complete", "msg": str(time.time())}) + "\n")
        done.wait(timeout=30)
        proc.kill()
        proc.wait()
    return samples


def bench_latency() -> None:
    print(
        f"== wake-up latency, event published → line printed by a waiting listener ({LATENCY_EVENTS} events)"
    )
    seed = wake_latency_seed(LATENCY_EVENTS)
    ours = wake_latency_ib(LATENCY_EVENTS)
    print(f"  ib listen (Redis Streams, XREADGROUP BLOCK): {summary_ms(ours)}")
    print(f"  seed design (queue file polled every 2 s):  {summary_ms(seed)}")
    print(f"  median speed-up: {percentile(seed, 50) / percentile(ours, 50):.0f}x")


def wall_times(cmd: list[str], env: dict[str, str], stdin: str, runs: int) -> list[float]:
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(
            cmd,
            env=env,
            input=stdin.encode(),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            check=False,
        )
        samples.append(time.perf_counter() - start)
    return samples


def bench_startup(runs: int = 60) -> None:
    print(f"== process wall time ({runs} runs each)")
    with scratch_namespace() as ns, tempfile.TemporaryDirectory() as tmp:
        env = ib_env(ns, tmp)
        client = redis.Redis.from_url(REDIS_URL)
        client.sadd(Keys(ns).agents, "agent-bench")  # the hook then has something to warn about
        base = wall_times([sys.executable, "-c", "pass"], env, "", runs)
        notify = wall_times([IB, "notify", "--from", "agent-bench", "bench message"], env, "", runs)
        hook = wall_times([IB, "hook", "post-tool-use"], env, json.dumps({"cwd": tmp}), runs)
        client.close()
    b = percentile(base, 50)
    for label, samples in (("python3 -c pass", base), ("ib notify", notify), ("ib hook post-tool-use", hook)):
        print(f"  {label:24s} {summary_ms(samples)}  ({percentile(samples, 50) / b:.2f}x bare interpreter)")


def bench_throughput(total: int = 100_000, batch: int = 500) -> None:
    print(f"== throughput, {total} events")
    with scratch_namespace() as ns:
        keys = Keys(ns)
        producer = redis.Redis.from_url(REDIS_URL, decode_responses=True)
        consumer = redis.Redis.from_url(REDIS_URL, decode_responses=True, socket_timeout=None)
        group = Group(consumer, keys.events, "bench", "c1")
        group.ensure("$")
        body = make_event("state", "x" * 64, sender="agent-bench", project="bench")
        handled = 0

        def consume() -> None:
            nonlocal handled
            while handled < total:
                entries = group.read(block_ms=2000, count=batch)
                envelopes(entries)  # decode, as a real consumer would
                group.ack([i for i, _ in entries])
                handled += len(entries)

        reader = threading.Thread(target=consume)
        start = time.perf_counter()
        reader.start()
        for _ in range(total // batch):
            pipe = producer.pipeline(transaction=False)
            for _ in range(batch):
                pipe.xadd(keys.events, {"e": json.dumps(body)}, maxlen=total * 2, approximate=True)
            pipe.execute()
        reader.join()
        elapsed = time.perf_counter() - start
        producer.close()
        consumer.close()
    print(
        f"  publish → XREADGROUP → decode → XACK (redis-py, batches of {batch}): "
        f"{total / elapsed:,.0f} events/s"
    )
    tool = shutil.which("redis-benchmark")
    if tool is None:
        print("  redis-benchmark: not installed")
        return
    with scratch_namespace() as ns:
        port = re.search(r":(\d+)", REDIS_URL)
        out = subprocess.run(
            [
                tool,
                "-p",
                port.group(1) if port else "6379",
                "-n",
                str(total),
                "-P",
                "16",
                "-q",
                "XADD",
                f"{ns}rb",
                "MAXLEN",
                "~",
                str(total),
                "*",
                "e",
                "x" * 100,
            ],
            capture_output=True,
            text=True,
            check=False,
        ).stdout
    figure = re.findall(r"([\d.]+) requests per second", out)
    print(
        f"  redis-benchmark XADD (pipeline 16, same server): {figure[-1] if figure else out.strip()} events/s"
    )


def main() -> None:
    which = sys.argv[1:] or ["latency", "startup", "throughput"]
    print(f"machine: {os.cpu_count()} cores; redis {redis.Redis.from_url(REDIS_URL).info()['redis_version']}")
    for name in which:
        {"latency": bench_latency, "startup": bench_startup, "throughput": bench_throughput}[name]()


if __name__ == "__main__":
    main()
