"""Poison entries of every kind in the events stream: every consumer (worker, `ib listen`, `ib events`
with and without a group, the dashboard's feed, the status node, the bot) goes on with the next entry,
and each poison entry is in the dead letters once, with its reason."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import redis

from bus.connection.clients import client_for
from bus.events.envelope import make_event
from bus.events.streams import publish
from bus.readers.stream_reader import StreamReader
from bus.wire.keys import Keys
from tests.bot_process import BotProcess, bot_env
from tests.cli import IbRunner
from tests.fake_telegram import FakeTelegram
from tests.faults.tally import Tally
from tests.integration.test_bot import bind_project, settled, shown
from tests.waiting import retry_until
from worker.frontends.dashboard import EventFeed
from worker.frontends.status_node import StatusNode

POISON: dict[str, dict[bytes, bytes]] = {
    "bad UTF-8": {b"e": b"\xff\xfe{}"},
    "not JSON": {b"e": b"not json"},
    "cut JSON": {b"e": b'{"type": "comp'},
    "a list": {b"e": b"[1, 2]"},
    "a string": {b"e": b'"hello"'},
    "no type": {b"e": b'{"msg": "no type"}'},
    "type not a string": {b"e": b'{"type": ["complete"]}'},
    "no e field": {b"other": b"x"},
    "bad UTF-8 field name": {b"\xff": b"x"},
    "nested 100k deep": {b"e": b"[" * 100_000},
}
GOOD = [f"good-{i}" for i in range(len(POISON) + 1)]


def _poison_stream(url: str, keys: Keys) -> None:
    """A good event, a poison entry, a good event, ... (good ones first and last)."""
    raw = redis.Redis.from_url(url)
    try:
        for text, fields in zip(GOOD, [*POISON.values(), None], strict=True):
            publish(client_for(url), keys, make_event("complete", text, project="poisoned"), 10_000)
            if fields is not None:
                raw.xadd(keys.events, fields)  # type: ignore[arg-type]
    finally:
        raw.close()


def _msgs(out: str) -> list[str]:
    return [json.loads(line)["msg"] for line in out.splitlines() if line.startswith("{")]


def _follow(ib: IbRunner, *args: str) -> list[str]:
    """`ib events` from the start until every good event is out, then SIGTERM."""
    proc = ib.popen("events", "--since", "0", *args)
    seen: list[str] = []
    assert proc.stdout is not None
    for line in proc.stdout:
        seen.append(json.loads(line)["msg"])
        if seen[-1] == GOOD[-1]:
            break
    proc.terminate()
    _rest, err = proc.communicate(timeout=20)
    assert proc.returncode == 0 and "Traceback" not in err, err
    return seen


def _dashboard(url: str, keys: Keys) -> list[str]:
    woke = threading.Event()
    feed = EventFeed(client_for(url, blocking=True), keys, woke.set)
    feed.start()
    try:
        retry_until(lambda: any(e.get("msg") == GOOD[-1] for e in feed.recent), 10, 0.02, "the dashboard")
    finally:
        feed.stopping.set()
    return [str(e["msg"]) for e in feed.recent]


def _status_node(url: str, keys: Keys, tmp_path: Path) -> int:
    """The node's group from the start: it reads the whole stream, says a trigger came, acknowledges all."""
    node = StatusNode(client_for(url), client_for(url, blocking=True), keys, tmp_path / "CLAUDE.md")
    node.group.start_id = "0"  # from the start of the stream
    StreamReader(node.group, node.take, "status node").drain()
    assert node.dirty  # a trigger came
    return int(client_for(url).xpending(keys.events, node.group.name)["pending"])


def test_poison_of_every_kind_stops_no_consumer(
    agents_ib: IbRunner, redis_url: str, rds: redis.Redis, keys: Keys, tally: Tally, tmp_path: Path
) -> None:
    ib = agents_ib
    assert ib.run("worker", "--once").returncode == 0  # its group exists: it sees what comes next
    _poison_stream(redis_url, keys)

    worker = ib.run("worker", "--once", "-v")
    assert worker.returncode == 0 and "Traceback" not in worker.stderr, worker.stderr
    logged = [line for line in worker.stderr.splitlines() if "is unreadable" in line]
    listened = _msgs(ib.run("listen", "--timeout", "5").stdout)
    followed = _follow(ib)
    grouped = _follow(ib, "--group", "faults")
    dashboard = [m for m in _dashboard(redis_url, keys) if m.startswith("good-")]
    pending_left = _status_node(redis_url, keys, tmp_path)
    dead = [json.loads(line) for line in ib.run("events", "--dead").stdout.splitlines()]

    assert len(logged) == len(POISON)
    assert listened == followed == grouped == dashboard == GOOD
    assert pending_left == 0
    assert [d["reason"] for d in dead] == [
        "not valid UTF-8",
        "not JSON",
        "not JSON",
        "not a JSON object (a list)",
        "not a JSON object (a str)",
        "no event type (field 'type' must be a non-empty string)",
        "no event type (field 'type' must be a non-empty string)",
        "no 'e' field",
        "no 'e' field",
        "not JSON",
    ]
    assert dead[0]["raw"] == "\\xff\\xfe{}"
    consumers = {"listen": listened, "events": followed, "events --group": grouped, "dashboard": dashboard}
    row = tally.count(
        f"{len(POISON)} kinds of poison entry among {len(GOOD)} events, read by worker, listen, events, "
        "events --group, dashboard, status node",
        [f"{c}:{g}" for c in consumers for g in GOOD],
        [f"{c}:{m}" for c, got in consumers.items() for m in got],
        note=f"{len(dead)} dead letters (each once), {len(logged)} worker log lines; no consumer stopped",
    )
    assert (row.lost, row.twice) == (0, 0)


def test_poison_does_not_stop_the_bot(
    ib: IbRunner,
    redis_url: str,
    rds: redis.Redis,
    keys: Keys,
    fake: FakeTelegram,
    tmp_path: Path,
    tally: Tally,
) -> None:
    bot = BotProcess(ib, fake, tmp_path / "bot.log", bot_env(fake))
    bot.start()
    try:
        thread = bind_project(fake, "poisoned")
        _poison_stream(redis_url, keys)
        retry_until(lambda: f"{GOOD[-1]}" in shown(fake, thread), 30, 0.05, "the last good event shown")
        settled(rds, keys)
    finally:
        bot.stop()
    text = shown(fake, thread)
    seen = [
        g for g in GOOD for _ in range(text.count(f"completed: {g}\n") + text.endswith(f"completed: {g}"))
    ]
    assert "Traceback" not in bot.log.read_text()
    row = tally.count(
        f"{len(POISON)} kinds of poison entry among {len(GOOD)} events, read by the bot",
        GOOD,
        seen,
        note="every event shown once; poison acknowledged and dead-lettered",
    )
    assert (row.lost, row.twice) == (0, 0)
