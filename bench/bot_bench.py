"""Benchmark of the Telegram bot (`python -m bot` as a process) against the fake Bot API.

    .venv/bin/python -m bench.bot_bench            # both
    .venv/bin/python -m bench.bot_bench burst      # one of: burst, latency

1. Burst: 1,000 events over 20 topics, published at once, while the fake enforces Telegram's limits
   (20 messages a minute in the group, edits included, one a second per chat with a burst of 3). The
   fake's clock runs SCALE times faster and the bot's limits are scaled the same
   (IB_TELEGRAM_TIME_SCALE); figures are given in real seconds and in Telegram time (real × SCALE).
   Printed: events lost, shown twice, messages and edits sent, 429 answers, and the time until the last
   event is visible beside the least the limits allow (at least one message per topic), and their ratio.
2. Idle latency: one event at a time on an idle bot, from the XADD on the bus to the sendMessage call
   arriving at the fake.
3. Status line: one busy agent (a tool use and its result every BUSY_GAP Telegram seconds on its
   output stream) for BUSY_MINUTES minutes of Telegram time, while a project topic gets an event every
   EVENT_GAP seconds. Printed per minute: the status line's changes (edits, moves to the bottom,
   deletions), the output message's sends and edits, the events' messages, all beside the group's
   budget of 20; 429s; and each event's time from XADD to Telegram.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

import redis

from bench.common import REDIS_URL, percentile, scratch_namespace, summary_ms
from bus.events.envelope import EVENT_FIELD, encode, make_event
from bus.events.streams import publish
from bus.wire.keys import Keys
from tests.fake_telegram import FakeTelegram, Limits
from tests.fake_telegram.api import Params

SCALE = float(os.environ.get("IB_BENCH_SCALE", "10"))
EVENTS = int(os.environ.get("IB_BENCH_EVENTS", "1000"))
TOPICS = 20
LATENCY_SAMPLES = int(os.environ.get("IB_BENCH_LATENCY_SAMPLES", "200"))
TELEGRAM = Limits(per_second=1.0, burst=3, per_minute=20)
BOT_GAP = 1.0  # the bot's own pacing: one message a second per chat, no burst
IDLE_GAP = 3.6  # Telegram seconds between two latency samples: under 20 a minute, so no limit applies
BUSY_MINUTES = float(os.environ.get("IB_BENCH_BUSY_MINUTES", "3"))
BUSY_GAP = 2.0  # Telegram seconds between two tool uses of the busy agent (30 a minute, plus results)
EVENT_GAP = 20.0  # Telegram seconds between two events in the project topic (3 a minute)


class TimedFake(FakeTelegram):
    """The fake Bot API, noting when each sendMessage arrives, and when each send or edit was accepted."""

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.arrived: list[tuple[float, str]] = []
        self.accepted: list[tuple[float, str]] = []
        self.lock = threading.Lock()

    def call(self, method: str, params: Params) -> object:
        arrived = time.monotonic()
        result = super().call(method, params)
        name = method.lower()
        if name in ("sendmessage", "editmessagetext"):
            text = params.text("text") or ""
            with self.lock:
                if name == "sendmessage":
                    self.arrived.append((arrived, text))
                self.accepted.append((time.monotonic(), text))
        return result


class CallLog(FakeTelegram):
    """The fake Bot API, noting every accepted call that shows something: (time, method, text)."""

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.log: list[tuple[float, str, str]] = []
        self.lock = threading.Lock()

    def call(self, method: str, params: Params) -> object:
        result = super().call(method, params)
        name = method.lower()
        if name in ("sendmessage", "editmessagetext", "deletemessage"):
            with self.lock:
                self.log.append((time.monotonic(), name, params.text("text") or ""))
        return result


def start_bot(fake: FakeTelegram, namespace: str, folder: str) -> subprocess.Popen[bytes]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("IB_")}
    env.update(
        IB_REDIS_URL=REDIS_URL,
        IB_NAMESPACE=namespace,
        IB_SPOOL_DIR=folder,
        IB_TELEGRAM_TOKEN=fake.token,
        IB_TELEGRAM_CHAT_ID=str(fake.chat_id),
        IB_TELEGRAM_ALLOWED_USERS="4242",
        IB_TELEGRAM_API_URL=fake.base_url,
        IB_TELEGRAM_TIME_SCALE=str(SCALE),
    )
    log = Path(folder) / "bot.log"
    with log.open("ab") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "bot"], env=env, cwd=folder, stdout=out, stderr=subprocess.STDOUT
        )
    deadline = time.monotonic() + 30
    while fake.calls("getUpdates") == 0:
        if proc.poll() is not None or time.monotonic() > deadline:
            raise SystemExit(f"the bot did not start:\n{log.read_text()}")
        time.sleep(0.01)
    return proc


def stop_bot(proc: subprocess.Popen[bytes]) -> None:
    proc.terminate()
    proc.wait(30)


def burst() -> None:
    fake = TimedFake(time_scale=SCALE, rates=TELEGRAM)
    with scratch_namespace() as ns, tempfile.TemporaryDirectory() as folder, fake:
        client = redis.Redis.from_url(REDIS_URL, decode_responses=True)
        keys = Keys(ns)
        for i in range(TOPICS):  # the agents' topics exist and are bound, as after their `spawned`
            client.hset(keys.topics("agent"), f"agent-{i}", str(fake.create_topic(f"agent-{i}")))
        proc = start_bot(fake, ns, folder)
        try:
            expected = [f"agent-{n % TOPICS}: s{n} → s{n + 1}" for n in range(EVENTS)]
            pipe = client.pipeline(transaction=False)
            start = time.monotonic()
            for n in range(EVENTS):
                data = {"from_state": f"s{n}", "to_state": f"s{n + 1}"}
                event = make_event("state", agent=f"agent-{n % TOPICS}", sender="bench", data=data)
                pipe.xadd(keys.events, {EVENT_FIELD: encode(event)})
            pipe.execute()
            published = time.monotonic() - start
            wanted = set(expected)
            deadline = time.monotonic() + 600
            while time.monotonic() < deadline:
                with fake.lock:
                    seen = {line for _t, text in fake.accepted for line in text.split("\n")}
                if wanted <= seen and client.xpending(keys.events, "telegram")["pending"] == 0:
                    break
                time.sleep(0.05)
        finally:
            stop_bot(proc)
        with fake.lock:
            accepted = list(fake.accepted)
        final = [m.text for topic in fake.topics() for m in fake.messages(topic.thread_id)]
        counts = Counter(line for text in final for line in text.split("\n"))
        lost = sum(1 for line in expected if counts[line] == 0)
        twice = sum(1 for line in expected if counts[line] > 1)
        first_seen: dict[str, float] = {}
        for t, text in accepted:
            for line in text.split("\n"):
                first_seen.setdefault(line, t)
        last = max((first_seen[line] for line in expected if line in first_seen), default=start) - start
        first = (accepted[0][0] - start) if accepted else 0.0
        floor_fake = (TOPICS - TELEGRAM.burst) / TELEGRAM.per_second
        floor_bot = (TOPICS - 1) * BOT_GAP
        print(
            f"burst: {EVENTS} events over {TOPICS} topics; fake clock ×{SCALE:g} "
            "(20 messages/minute per group, 1/s per chat with a burst of 3)"
        )
        print(f"  published in {published * 1000:.0f} ms (one pipeline)")
        print(f"  events lost: {lost}   shown twice: {twice}")
        print(f"  first message accepted after {first:.2f} s real (the bot reads the whole burst first)")
        print(
            f"  messages sent: {fake.sent}   edits: {fake.edited}   (both count towards 20/minute)   "
            f"refused (429): {fake.rejected_429}"
        )
        print(
            f"  last event visible after {last:.2f} s real = {last * SCALE:.1f} s Telegram time; "
            f"least the limits allow for {TOPICS} messages: "
            f"{floor_fake / SCALE:.2f} s real = {floor_fake:.1f} s  → {last * SCALE / floor_fake:.2f}× "
            f"(goal ≤ 1.5×)\n"
            f"    (with the bot's own 1/s pacing, no burst: "
            f"{floor_bot / SCALE:.2f} s real = {floor_bot:.1f} s)"
        )


def latency() -> None:
    fake = TimedFake(time_scale=SCALE, rates=TELEGRAM)
    with scratch_namespace() as ns, tempfile.TemporaryDirectory() as folder, fake:
        client = redis.Redis.from_url(REDIS_URL, decode_responses=True)
        keys = Keys(ns)
        client.hset(keys.topics("project"), "bench", str(fake.create_topic("bench")))
        proc = start_bot(fake, ns, folder)
        samples: list[float] = []
        try:
            for n in range(LATENCY_SAMPLES + 5):
                marker = f"+ lat-{n} added"
                before = time.monotonic()
                publish(client, keys, make_event("task_added", task=f"lat-{n}", project="bench"), 10_000)
                arrived = None
                while arrived is None:
                    with fake.lock:
                        arrived = next((t for t, text in reversed(fake.arrived) if marker in text), None)
                    if arrived is None:
                        time.sleep(0.0005)
                if n >= 5:  # the first few warm connections up
                    samples.append(arrived - before)
                time.sleep(IDLE_GAP / SCALE)  # idle again: within both the second's and the minute's budget
        finally:
            stop_bot(proc)
        print(f"idle latency, event XADD → sendMessage at the fake: {summary_ms(samples)}")
        p50, p99 = percentile(samples, 50) * 1000, percentile(samples, 99) * 1000
        print(f"  p50={p50:.1f} ms  p99={p99:.1f} ms (goal: p99 ≤ 50 ms)")


def busy_agent(client: redis.Redis, keys: Keys, agent: str, until: float) -> None:
    """An agent at work: a prompt, then a tool use and its result every BUSY_GAP Telegram seconds."""
    stream = keys.output(agent)

    def item(kind: str, text: str, tool: str = "") -> None:
        ts = datetime.now(UTC).isoformat()
        client.xadd(stream, {"kind": kind, "text": text, "tool": tool, "ts": ts})

    item("prompt", "")
    n = 0
    while time.monotonic() < until:
        item("tool_use", f"**Read**(src/module_{n}.py)", "Read")
        time.sleep(BUSY_GAP / SCALE / 2)
        item("tool_result", f"Read {n + 10} lines", "Read")
        time.sleep(BUSY_GAP / SCALE / 2)
        n += 1


def status() -> None:
    fake = CallLog(time_scale=SCALE, rates=TELEGRAM)
    with scratch_namespace() as ns, tempfile.TemporaryDirectory() as folder, fake:
        client = redis.Redis.from_url(REDIS_URL, decode_responses=True)
        keys = Keys(ns)
        topic = fake.create_topic("agent-busy")
        client.hset(keys.topics("agent"), "agent-busy", str(topic))
        client.hset(keys.topics("project"), "bench", str(fake.create_topic("bench")))
        proc = start_bot(fake, ns, folder)
        published: dict[str, float] = {}
        try:
            start = time.monotonic()
            until = start + BUSY_MINUTES * 60 / SCALE
            worker = threading.Thread(target=busy_agent, args=(client, keys, "agent-busy", until))
            worker.start()
            n = 0
            while time.monotonic() < until:
                published[f"+ ev-{n} added"] = time.monotonic()
                publish(client, keys, make_event("task_added", task=f"ev-{n}", project="bench"), 10_000)
                n += 1
                time.sleep(EVENT_GAP / SCALE)
            worker.join()
            publish(client, keys, make_event("complete", "done", agent="agent-busy"), 10_000)
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline:
                with fake.lock:
                    texts = "\n".join(text for _t, _m, text in fake.log)
                if all(marker in texts for marker in published) and "completed" in texts:
                    break
                time.sleep(0.05)
            time.sleep(30 / SCALE)  # the status line's removal
        finally:
            stop_bot(proc)
        with fake.lock:
            log = [(t, m, text) for t, m, text in fake.log if t <= until]
            seen: dict[str, float] = {}
            for t, _m, text in fake.log:
                for line in text.split("\n"):
                    seen.setdefault(line, t)
        minutes = BUSY_MINUTES
        status_sends = sum(1 for _t, m, text in log if m == "sendmessage" and text.startswith("⚙"))
        status_edits = sum(1 for _t, m, text in log if m == "editmessagetext" and text.startswith("⚙"))
        deletes = sum(1 for _t, m, _text in log if m == "deletemessage")
        event_sends = sum(1 for _t, m, text in log if m == "sendmessage" and text.startswith("+ ev-"))
        output_sends = sum(1 for _t, m, text in log if m == "sendmessage" and not text.startswith("⚙"))
        output_sends -= event_sends  # what is neither status nor event: the agent's output
        output_edits = sum(1 for _t, m, text in log if m == "editmessagetext" and not text.startswith("⚙"))
        counted = status_sends + status_edits + output_sends + output_edits + event_sends
        latencies = [seen[marker] - at for marker, at in published.items() if marker in seen]
        lost = len(published) - len(latencies)
        print(
            f"status line under a busy agent: {BUSY_MINUTES:g} Telegram minutes, fake clock ×{SCALE:g}; "
            f"a tool use + result every {BUSY_GAP:g} s, an event in another topic every {EVENT_GAP:g} s"
        )
        print(
            f"  status line: {status_edits / minutes:.1f} edits/min + {status_sends / minutes:.1f} sends/min "
            f"(new, or moved to the bottom) + {deletes / minutes:.1f} deletions/min"
        )
        print(
            f"  output message: {output_edits / minutes:.1f} edits/min + {output_sends / minutes:.1f} "
            f"sends/min;  events: {event_sends / minutes:.1f} messages/min"
        )
        print(
            f"  everything counted: {counted / minutes:.1f}/min beside the group's budget of "
            f"{TELEGRAM.per_minute}/min; refused (429): {fake.rejected_429}"
        )
        waits = sorted(x * SCALE for x in latencies)
        if waits:
            print(
                f"  events: {len(latencies)} shown, {lost} lost; XADD → Telegram, in Telegram seconds: "
                f"p50={percentile(waits, 50):.2f} s  max={waits[-1]:.2f} s"
            )


def main() -> None:
    which = sys.argv[1:] or ["burst", "latency", "status"]
    for name in which:
        {"burst": burst, "latency": latency, "status": status}[name]()


if __name__ == "__main__":
    main()
