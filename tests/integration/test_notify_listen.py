"""`ib notify` → `ib listen` over a real Redis: the seed's contract, no loss, at-least-once on crashes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import redis

from bus.events.envelope import make_event
from bus.events.streams import publish
from bus.readers.listener import TIMEOUT_MESSAGE
from bus.wire.keys import Keys
from tests.cli import IB, IbRunner
from tests.waiting import retry_until


def lines(out: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in out.split("\n") if line.startswith("{")]


def test_round_trip_shape_and_order(ib: IbRunner) -> None:
    for kind in ("complete", "waiting", "question"):
        assert (
            ib.run(
                "notify", "--type", kind, "--from", "agent-a1", "--project", "backend", f"{kind} msg"
            ).returncode
            == 0
        )
    done = ib.run("listen", "--timeout", "5")
    assert done.returncode == 0, done.stderr
    got = lines(done.stdout)
    assert [e["type"] for e in got] == ["complete", "waiting", "question"]
    first = got[0]
    assert {"id", "ts", "from", "type", "msg", "project", "agent", "task", "data"} <= set(first)
    assert first["from"] == "agent-a1" and first["agent"] == "agent-a1" and first["project"] == "backend"
    assert first["msg"] == "complete msg"
    assert str(first["ts"]).startswith("20")


def test_default_type_is_complete_and_listen_consumes(ib: IbRunner) -> None:
    ib.run("notify", "all", "done")
    got = lines(ib.run("listen", "--timeout", "5").stdout)
    assert [(e["type"], e["msg"]) for e in got] == [("complete", "all done")]
    again = ib.run("listen", "--timeout", "0.5")
    assert again.stdout.strip() == TIMEOUT_MESSAGE


def test_timeout_message_exact_and_exit_zero(ib: IbRunner) -> None:
    done = ib.run("listen", "--timeout", "0.3")
    assert done.returncode == 0
    assert done.stdout == TIMEOUT_MESSAGE + "\n"


def test_listener_wakes_on_event(ib: IbRunner) -> None:
    proc = ib.popen("listen", "--timeout", "30")
    retry_until(lambda: _listener_alive(ib), what="listener heartbeat")
    ib.run("notify", "--type", "question", "wake up")
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert [e["msg"] for e in lines(out)] == ["wake up"]


def test_a_plain_listener_wakes_for_a_dialog(ib: IbRunner, rds: redis.Redis, keys: Keys) -> None:
    """The issue that found it: an agent sat in a permission dialog while `ib listen` slept through it."""
    rds.hset(keys.agent("a2"), mapping={"id": "a2", "state": "running"})
    proc = ib.popen("listen", "--timeout", "60")
    retry_until(lambda: _listener_alive(ib), what="listener heartbeat")
    payload = {"hook_event_name": "PermissionRequest", "tool_name": "Bash", "tool_input": {"command": "make"}}
    told = ib.run("hook", "event", stdin=json.dumps(payload), env={"IB_AGENT_ID": "a2"})
    assert told.returncode == 0, told.stderr
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert [(e["type"], e["agent"]) for e in lines(out)] == [("permission", "a2")]


def _listener_alive(ib: IbRunner, name: str = "default") -> bool:
    client = redis.Redis.from_url(ib.env["IB_REDIS_URL"])
    try:
        return bool(client.exists(Keys(ib.env["IB_NAMESPACE"]).listener(name)))
    finally:
        client.close()


def test_a_new_listener_skips_the_backlog_of_agents_already_torn_down(
    ib: IbRunner, rds: redis.Redis, keys: Keys
) -> None:
    """A listener of a new name starts an hour back (events sent before any listener arrive), but not
    with the turns of agents that were merged or killed since: someone acted on those already."""
    rds.sadd(keys.agents, "live")
    for agent in ("merged-one", "killed-one", "live", "anyone"):
        assert ib.run("notify", "--type", "complete", "--from", agent, f"{agent} done").returncode == 0
    publish(rds, keys, make_event("merged", "merged-one merged", agent="merged-one"), 1000)
    publish(rds, keys, make_event("killed", "killed-one killed", agent="killed-one"), 1000)
    got = lines(ib.run("listen", "--name", "fresh", "--timeout", "5").stdout)
    assert [e["msg"] for e in got] == ["live done", "anyone done"]  # `anyone` was never an agent: kept
    ib.run("notify", "--type", "complete", "--from", "merged-one", "a name used again")
    again = lines(ib.run("listen", "--name", "fresh", "--timeout", "5").stdout)
    assert [e["msg"] for e in again] == ["a name used again"]  # after its start: everything


def test_types_filter(ib: IbRunner) -> None:
    ib.run("notify", "--type", "complete", "one")
    ib.run("notify", "--type", "question", "two")
    got = lines(ib.run("listen", "--timeout", "5", "--types", "question", "--name", "q").stdout)
    assert [e["msg"] for e in got] == ["two"]


def test_a_filtered_listener_leaves_the_other_types_to_the_next_one(ib: IbRunner) -> None:
    """The README's example: `--types complete,question` shows those; `waiting` stays for `ib listen`."""
    for kind, text in (("complete", "done"), ("waiting", "stuck"), ("question", "which?")):
        assert ib.run("notify", "--type", kind, text).returncode == 0
    filtered = lines(ib.run("listen", "--timeout", "60", "--types", "complete,question").stdout)
    assert [e["msg"] for e in filtered] == ["done", "which?"]
    again = lines(ib.run("listen", "--timeout", "5", "--types", "complete,question").stdout)
    assert again == []  # what it showed it acknowledged
    plain = lines(ib.run("listen", "--timeout", "60").stdout)
    assert [e["msg"] for e in plain] == ["stuck"]
    assert lines(ib.run("listen", "--timeout", "2").stdout) == []


def test_second_listener_same_name_exits_at_once(ib: IbRunner) -> None:
    first = ib.popen("listen", "--timeout", "30", "--name", "solo")
    retry_until(lambda: _listener_alive(ib, "solo"), what="first listener")
    second = ib.run("listen", "--timeout", "30", "--name", "solo", timeout=20)
    assert second.returncode == 0
    assert "already running" in second.stderr
    assert second.stdout == ""
    first.send_signal(signal.SIGTERM)
    first.communicate(timeout=10)
    assert not _listener_alive(ib, "solo")


def test_no_loss_200_events_without_listener(ib: IbRunner, rds: redis.Redis, keys: Keys) -> None:
    _publish_many(rds, keys, 200)
    got = lines(ib.run("listen", "--timeout", "5").stdout)
    assert [e["msg"] for e in got] == [f"event {i}" for i in range(200)]
    assert ib.run("listen", "--timeout", "0.3").stdout.strip() == TIMEOUT_MESSAGE


def _publish_many(client: redis.Redis, keys: Keys, count: int, size: int = 0) -> None:
    from bus.events.envelope import make_event
    from bus.events.streams import publish

    for i in range(count):
        publish(
            client, keys, make_event("waiting", f"event {i}" + "x" * size, sender="agent-b"), maxlen=100_000
        )


def test_concurrent_notifiers_each_event_printed_once(ib: IbRunner) -> None:
    seen: list[str] = []
    stop_at = 20 * 20

    def notifier(n: int) -> None:
        for i in range(20):
            result = ib.run("notify", "--from", f"agent-{n}", f"n{n}-{i}")
            assert result.returncode == 0, result.stderr

    with ThreadPoolExecutor(max_workers=20) as pool:
        futures = [pool.submit(notifier, n) for n in range(20)]
        while len(seen) < stop_at:
            out = ib.run("listen", "--timeout", "20").stdout
            got = lines(out)
            assert got or all(f.done() for f in futures), "listener timed out while notifiers still ran"
            if not got:
                break
            seen.extend(str(e["msg"]) for e in got)
        for f in futures:
            f.result()
    assert sorted(seen) == sorted(f"n{n}-{i}" for n in range(20) for i in range(20))
    assert len(seen) == len(set(seen))


def test_kill_9_between_print_and_ack_prints_again(ib: IbRunner, rds: redis.Redis, keys: Keys) -> None:
    # 2 MB of events: the listener blocks writing into the pipe we do not read, before it can ack.
    _publish_many(rds, keys, 1000, size=2000)
    proc = ib.popen("listen", "--timeout", "30")
    assert proc.stdout is not None
    first = json.loads(proc.stdout.readline())
    assert first["msg"].startswith("event 0")
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=10)
    got = lines(ib.run("listen", "--timeout", "10").stdout)
    assert [str(e["msg"])[:10].rstrip("x") for e in got] == [f"event {i}" for i in range(1000)]
    assert ib.run("listen", "--timeout", "0.3").stdout.strip() == TIMEOUT_MESSAGE


def test_listener_killed_before_anything_leaves_no_heartbeat_forever(ib: IbRunner) -> None:
    proc = ib.popen("listen", "--timeout", "30", "--name", "k")
    retry_until(lambda: _listener_alive(ib, "k"))
    client = redis.Redis.from_url(ib.env["IB_REDIS_URL"], decode_responses=True)
    key = Keys(ib.env["IB_NAMESPACE"]).listener("k")
    holder = client.get(key)  # `host:pid:…`: the process that listens (the warm server's, or `ib` itself)
    assert holder is not None
    os.kill(int(str(holder).split(":")[1]), signal.SIGKILL)  # no chance to let go of its heartbeat
    proc.wait(timeout=10)
    ttl = client.ttl(key)
    client.close()
    assert proc.returncode == -signal.SIGKILL  # `ib` ends as its command did
    assert 0 < ttl <= 15  # liveness expires by itself


@pytest.mark.parametrize("kind", ["bogus", "COMPLETE", ""], ids=["bogus", "uppercase", "empty"])
def test_unknown_type_is_refused(ib: IbRunner, kind: str) -> None:
    done = ib.run("notify", "--type", kind, "hello")
    assert done.returncode == 2
    assert "unknown type" in done.stderr and "complete, waiting, question" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("args", [[], [""], ["   "]], ids=["none", "empty", "blank"])
def test_empty_message_is_refused(ib: IbRunner, args: list[str]) -> None:
    done = ib.run("notify", *args)
    assert done.returncode == 2
    assert "message required" in done.stderr


def test_every_control_character_round_trips(ib: IbRunner) -> None:
    text = (
        "".join(chr(c) for c in range(1, 32)) + '\x7f\x85 "quotes" \\back\\slash\\ é ü 漢字 🤖 \u2028\u2029'
    )
    assert ib.run("notify", "-", stdin=text).returncode == 0
    assert ib.run("notify", text.replace("\x00", "")).returncode == 0
    got = lines(ib.run("listen", "--timeout", "5").stdout)
    assert [e["msg"] for e in got] == [text, text]


def test_one_megabyte_message_accepted_and_larger_refused(ib: IbRunner) -> None:
    big = "a" * 1_000_000
    assert ib.run("notify", "-", stdin=big).returncode == 0
    too_big = "b" * (1_048_576 + 1)
    refused = ib.run("notify", "-", stdin=too_big)
    assert refused.returncode == 2
    assert "limit is 1048576" in refused.stderr and "IB_MAX_MESSAGE_BYTES" in refused.stderr
    got = lines(ib.run("listen", "--timeout", "5").stdout)
    assert [len(str(e["msg"])) for e in got] == [1_000_000]


def test_invalid_utf8_argument_is_refused(ib: IbRunner) -> None:
    done = subprocess.run(
        [os.fsencode(IB), b"notify", b"bad \xff byte"],
        capture_output=True,
        env=ib.environ(),
        cwd=ib.cwd,
        timeout=30,
        check=False,
    )
    assert done.returncode == 2
    assert b"not valid UTF-8" in done.stderr


def test_sender_detected_from_worktree_path_then_env(ib: IbRunner, repo: Path) -> None:
    worktree = repo / ".ib" / "agents" / "agent-wt1" / "repo" / "src"
    worktree.mkdir(parents=True)
    ib.run("notify", "from worktree", cwd=worktree)
    ib.run("notify", "from env", env={"IB_AGENT_ID": "agent-env"})
    ib.run("notify", "from nobody")
    got = lines(ib.run("listen", "--timeout", "5").stdout)
    assert [e["from"] for e in got] == ["agent-wt1", "agent-env", "unknown"]


def test_unknown_fields_and_types_from_newer_producer(ib: IbRunner, rds: redis.Redis, keys: Keys) -> None:
    newer = {
        "ts": "2030-01-01T00:00:00+00:00",
        "type": "teleported",
        "from": "agent-z",
        "msg": "hi",
        "novel": [1, 2],
    }
    rds.xadd(keys.events, {"e": json.dumps(newer)})
    rds.xadd(keys.events, {"e": "not json at all"})
    rds.xadd(keys.events, {"other": "field"})
    rds.xadd(keys.events, {"e": json.dumps({**newer, "msg": "after the garbage"})})
    got = lines(ib.run("listen", "--timeout", "5", "--types", "teleported").stdout)
    assert [e["msg"] for e in got] == ["hi", "after the garbage"]
    assert got[0]["novel"] == [1, 2]
    dead = lines(ib.run("events", "--dead").stdout)  # the garbage went to the dead letters, with why
    assert [(d["reason"], d["raw"]) for d in dead] == [
        ("not JSON", "not json at all"),
        ("no 'e' field", '{"other":"field"}'),
    ]


def test_options_read_the_same_from_ib_ask_and_from_a_hook(
    ib: IbRunner, rds: redis.Redis, keys: Keys
) -> None:
    """`data.options` has one shape whoever made the event: {"number", "label"} (bus.events.event_options)."""
    asked = ib.run("ask", "Postgres or SQLite?", "--option", "Postgres", "--option", "SQLite", "--from", "a1")
    assert asked.returncode == 0, asked.stderr
    rds.hset(keys.agent("a2"), mapping={"id": "a2", "state": "running"})
    payload = {"hook_event_name": "PermissionRequest", "tool_name": "Bash", "tool_input": {"command": "make"}}
    told = ib.run("hook", "event", stdin=json.dumps(payload), env={"IB_AGENT_ID": "a2"})
    assert told.returncode == 0, told.stderr
    got = lines(ib.run("listen", "--timeout", "5", "--types", "question,permission").stdout)
    assert [(e["type"], e["data"]["options"]) for e in got] == [  # type: ignore[index]
        ("question", [{"number": None, "label": "Postgres"}, {"number": None, "label": "SQLite"}]),
        (
            "permission",
            [
                {"number": None, "label": "approve"},
                {"number": None, "label": "approve always"},
                {"number": None, "label": "deny"},
            ],
        ),
    ]
