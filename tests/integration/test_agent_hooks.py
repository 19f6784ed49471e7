"""The agents' Stop and SessionStart hooks run as Claude Code runs them: JSON on stdin, never failing."""

from __future__ import annotations

import json
import shlex
import signal
import subprocess
from pathlib import Path
from typing import cast

import pytest
import redis

from bus.commands.worker_commands import Send
from bus.commands.worker_rpc import Received, decode_command
from bus.wire.keys import Keys
from tests.cli import IbRunner
from tests.redis_server import RedisServer
from tests.streams import stream_entries
from tests.waiting import retry_until
from worker.tmux.client import Tmux


def _types(rds: redis.Redis, keys: Keys) -> list[str]:
    return [json.loads(f["e"])["type"] for _i, f in stream_entries(rds, keys.events)]


def _stop(ib: IbRunner, agent: str, message: str, session: str = "s1", transcript: str = "") -> int:
    payload = {
        "session_id": session,
        "transcript_path": transcript,
        "cwd": str(ib.cwd),
        "hook_event_name": "Stop",
        "stop_hook_active": False,
        "last_assistant_message": message,
    }
    done = ib.run("hook", "stop", stdin=json.dumps(payload), env={"IB_AGENT_ID": agent})
    assert done.stdout == "" and done.stderr == ""
    return done.returncode


def test_stop_publishes_once_per_turn(ib: IbRunner, rds: redis.Redis, keys: Keys, tmp_path: Path) -> None:
    rds.hset(keys.agent("a1"), mapping={"id": "a1", "role": "manager", "project": "p"})
    transcript = tmp_path / "t.jsonl"
    transcript.write_text('{"type":"assistant"}\n')
    assert _stop(ib, "a1", "Done.\nI HAVE COMPLETED THE GOAL", transcript=str(transcript)) == 0
    assert (
        _stop(ib, "a1", "Done.\nI HAVE COMPLETED THE GOAL", transcript=str(transcript)) == 0
    )  # same turn again
    assert _types(rds, keys) == ["complete"]
    transcript.write_text('{"type":"assistant"}\n{"type":"user"}\n{"type":"assistant"}\n')  # a new turn
    assert _stop(ib, "a1", "Need input.\nWAITING", transcript=str(transcript)) == 0
    assert _types(rds, keys) == ["complete", "waiting"]
    event = json.loads(stream_entries(rds, keys.events)[0][1]["e"])
    assert (event["from"], event["project"], event["msg"]) == ("a1", "p", "Manager a1 completed its goal")
    assert rds.hget(keys.agent("a1"), "state") == "waiting"


def _commands(client: redis.Redis, stream: str) -> list[Received]:
    """The commands waiting on a worker's command stream, decoded as the worker decodes them."""
    entries = cast(list[tuple[str, dict[str, str]]], client.xrange(stream))
    found = [decode_command(fields) for _id, fields in entries]
    return [f for f in found if isinstance(f, Received)]


def test_stop_sends_the_manager_note_to_the_managers_worker(
    ib: IbRunner, rds: redis.Redis, keys: Keys, tmux_socket: str, tmp_path: Path
) -> None:
    """The note is a `send` command on the stream of the worker that owns the manager (here another
    machine's): the hook types nothing itself."""
    heard = tmp_path / "heard.txt"
    manager = Tmux(tmux_socket, config_file="/dev/null")
    manager.new_session("boss-session", tmp_path, f"exec cat > {shlex.quote(str(heard))}", {})
    rds.hset(
        keys.agent("boss"),
        mapping={"id": "boss", "role": "manager", "session": "boss-session", "worker": "far-box"},
    )
    rds.hset(keys.agent("w1"), mapping={"id": "w1", "role": "worker", "project": "p", "manager": "boss"})
    ib.env["IB_TMUX_SOCKET"] = tmux_socket
    assert _stop(ib, "w1", "Done.\nI HAVE COMPLETED THE GOAL") == 0
    [found] = _commands(rds, keys.commands("far-box"))
    assert found.sender == "w1"
    assert found.command == Send(agent="boss", text="[hook]: Your subtask w1 just completed", sender="w1")
    assert not heard.exists() or heard.read_text() == ""


@pytest.mark.parametrize("sender", ["next-hook", "worker-tick"])
def test_stop_with_redis_down_keeps_the_manager_note_until_it_answers(
    ib: IbRunner, tmp_path: Path, tmux_socket: str, sender: str
) -> None:
    """The note waits beside the spool while Redis is away; once it answers, the next Stop hook (before
    its own note) or the worker's tick puts it on the manager's worker's stream, and the file empties."""
    server = RedisServer(tmp_path / "redis", ["--appendonly", "yes"]).start()
    folder = ib.cwd / ".ib" / "agents" / "a1"
    folder.mkdir(parents=True)
    (folder / "meta.json").write_text(json.dumps({"id": "a1", "role": "worker", "manager": "boss"}))
    env = {"IB_AGENT_ID": "a1", "IB_REDIS_URL": server.url, "IB_ROOT": str(ib.cwd)}
    keys = Keys(ib.env["IB_NAMESPACE"])
    waiting = Send(agent="boss", text="[hook]: Your subtask a1 is now waiting for input", sender="a1")
    try:
        server.client().hset(keys.agent("boss"), mapping={"id": "boss", "worker": "far-box"})
        server.client().hset(keys.agent("a1"), mapping={"id": "a1", "role": "worker", "manager": "boss"})
        server.stop()
        payload = {"session_id": "s", "last_assistant_message": "one\nWAITING", "cwd": str(ib.cwd)}
        done = ib.run("hook", "stop", stdin=json.dumps(payload), env=env)
        assert (done.returncode, done.stdout) == (0, "")
        server.start()
        stream = keys.commands("far-box")
        assert stream_entries(server.client(), stream) == []
        if sender == "next-hook":
            payload = {**payload, "last_assistant_message": "two\nI HAVE COMPLETED THE GOAL"}
            assert ib.run("hook", "stop", stdin=json.dumps(payload), env=env).returncode == 0
            completed = Send(agent="boss", text="[hook]: Your subtask a1 just completed", sender="a1")
            assert [n.command for n in _commands(server.client(), stream)] == [waiting, completed]
        else:
            worker_env = {**env, "IB_WORKER_ID": "here", "IB_TMUX_SOCKET": tmux_socket}
            ticked = ib.run("worker", "--once", env=worker_env)
            assert ticked.returncode == 0, ticked.stderr
            assert [n.command for n in _commands(server.client(), stream)] == [waiting]
        (kept,) = (tmp_path / "spool").glob("*.notes")
        assert kept.read_text() == ""
    finally:
        server.stop()


def test_stop_without_marker_is_waiting(ib: IbRunner, rds: redis.Redis, keys: Keys) -> None:
    """The turn is over and no marker says it finished: the agent waits for the person."""
    rds.hset(keys.agent("a1"), mapping={"id": "a1", "role": "worker", "project": "p"})
    assert _stop(ib, "a1", "Should I use Postgres or SQLite?") == 0
    assert _types(rds, keys) == ["waiting"]
    assert rds.hget(keys.agent("a1"), "state") == "waiting"


def test_a_late_stop_of_an_agent_torn_down_tells_its_turn_and_makes_no_record(
    ib: IbRunner, rds: redis.Redis, keys: Keys
) -> None:
    """A Stop hook that runs after its agent was torn down (or for an id we never had): the turn's end still
    goes out, but no state-only record comes back in the agent's place (one with no id, which every later
    read of the agent refused: a worker traceback for each of its events)."""
    assert _stop(ib, "gone", "Done.\nI HAVE COMPLETED THE GOAL") == 0
    assert _types(rds, keys) == ["complete"]
    assert rds.exists(keys.agent("gone")) == 0


@pytest.mark.parametrize(
    "stdin",
    ["", "garbage{", "[]", '{"last_assistant_message": 5}', "\x00\x01"],
    ids=["empty", "garbage", "list", "bad-field", "binary"],
)
def test_stop_with_bad_stdin_never_fails(ib: IbRunner, rds: redis.Redis, keys: Keys, stdin: str) -> None:
    done = ib.run("hook", "stop", stdin=stdin, env={"IB_AGENT_ID": "a1"})
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    assert _types(rds, keys) == []


def test_stop_with_redis_down_spools_then_delivers_once_in_order(ib: IbRunner, tmp_path: Path) -> None:
    """Three turns end while Redis is down: the spool holds the three events (with the agent's facts from
    its meta.json); Redis back, the next `ib` call sends them, in order, once."""
    server = RedisServer(tmp_path / "redis", ["--appendonly", "yes"]).start()
    meta = ib.cwd / ".ib" / "agents" / "a1"
    meta.mkdir(parents=True)
    (meta / "meta.json").write_text(
        json.dumps({"id": "a1", "project": "shop", "task": "t1", "role": "worker"})
    )
    env = {"IB_AGENT_ID": "a1", "IB_REDIS_URL": server.url, "IB_ROOT": str(ib.cwd)}
    try:
        server.stop()
        for turn, last in enumerate(["one\nWAITING", "two\nI HAVE COMPLETED THE GOAL", "three\nWAITING"]):
            payload = {"session_id": "s", "last_assistant_message": last, "cwd": str(ib.cwd), "turn": turn}
            done = ib.run("hook", "stop", stdin=json.dumps(payload), env=env)
            assert (done.returncode, done.stdout) == (0, "")
            assert "kept in" in done.stderr and len(done.stderr.splitlines()) == 1
        (spool_file,) = (tmp_path / "spool").glob("*.jsonl")
        kept = [json.loads(json.loads(line)["event"]) for line in spool_file.read_text().splitlines()]
        assert [(e["type"], e["from"], e["project"], e["task"]) for e in kept] == [
            ("waiting", "a1", "shop", "t1"),
            ("complete", "a1", "shop", "t1"),
            ("waiting", "a1", "shop", "t1"),
        ]
        assert [e["data"]["last_message"] for e in kept] == [
            "one\nWAITING",
            "two\nI HAVE COMPLETED THE GOAL",
            "three\nWAITING",
        ]
        server.start()
        assert ib.run("notify", "after", env=env).returncode == 0
        assert ib.run("notify", "after again", env=env).returncode == 0  # flushes nothing twice
        events = [
            json.loads(f["e"]) for _i, f in stream_entries(server.client(), ib.env["IB_NAMESPACE"] + "events")
        ]
        assert [(e["type"], e["data"].get("last_message", e["msg"])) for e in events] == [
            ("waiting", "one\nWAITING"),
            ("complete", "two\nI HAVE COMPLETED THE GOAL"),
            ("waiting", "three\nWAITING"),
            ("complete", "after"),
            ("complete", "after again"),
        ]
        assert spool_file.read_text() == ""
    finally:
        server.stop()


def test_stop_with_a_bad_setting_says_it_and_logs_it(ib: IbRunner) -> None:
    folder = ib.cwd / ".ib" / "agents" / "a1"
    folder.mkdir(parents=True)
    payload = json.dumps({"session_id": "s", "last_assistant_message": "x\nWAITING", "cwd": str(ib.cwd)})
    env = {"IB_AGENT_ID": "a1", "IB_ROOT": str(ib.cwd), "IB_REDIS_URL": "redis://h:port"}
    done = ib.run("hook", "stop", stdin=payload, env=env)
    assert (done.returncode, done.stdout) == (0, "")
    assert done.stderr.startswith("ib hook stop: error: bad configuration: IB_REDIS_URL")
    assert len(done.stderr.splitlines()) == 1
    assert "[hook stop] bad configuration: IB_REDIS_URL" in (folder / "agent.log").read_text()


def test_session_start_records_transcript_and_reminds(ib: IbRunner, rds: redis.Redis, keys: Keys) -> None:
    rds.hset(keys.agent("a2"), mapping={"id": "a2"})
    payload = {
        "session_id": "abc",
        "transcript_path": "/tmp/t.jsonl",
        "cwd": str(ib.cwd),
        "hook_event_name": "SessionStart",
    }
    done = ib.run(
        "hook",
        "session-start",
        stdin=json.dumps(payload),
        env={"IB_AGENT_ID": "a2", "IB_AGENT_ROLE": "worker"},
    )
    assert done.returncode == 0
    context = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "worker agent a2" in context and "I HAVE COMPLETED THE GOAL" in context
    assert rds.hget(keys.agent("a2"), "transcript_path") == "/tmp/t.jsonl"
    assert rds.hget(keys.agent("a2"), "claude_session") == "abc"
    garbage = ib.run("hook", "session-start", stdin="{{{", env={"IB_AGENT_ID": "a2"})
    assert (garbage.returncode, garbage.stdout) == (0, "")


def test_worker_stops_on_sigterm_and_leaves_agents(agents_ib: IbRunner) -> None:
    ib = agents_ib
    assert ib.run("new-agent", "Wait around.\nfake: wait", "--name", "stays").returncode == 0
    worker = ib.popen("worker")
    client = redis.Redis.from_url(ib.env["IB_REDIS_URL"])
    # its heartbeat says it runs, its signal handlers in place: a SIGTERM while Python is still starting
    # would end it as the signal's default does (-15), which is not what this test is about
    heartbeat = Keys(ib.env["IB_NAMESPACE"]).worker(ib.env["IB_WORKER_ID"])
    retry_until(lambda: client.exists(heartbeat), timeout=30, what="the worker's heartbeat")
    client.close()
    retry_until(
        lambda: "waiting" in ib.run("list", "--json").stdout, timeout=30, what="the worker to see the agent"
    )
    worker.send_signal(signal.SIGTERM)
    assert worker.wait(timeout=15) == 0
    sessions = subprocess.run(
        ["tmux", "-L", ib.env["IB_TMUX_SOCKET"], "list-sessions", "-F", "#{session_name}"],
        capture_output=True,
        text=True,
        check=False,
    ).stdout
    assert "stays" in sessions
    second = ib.run("worker", "--once")
    assert second.returncode == 0, second.stderr
    assert json.loads(ib.run("list", "--json").stdout)[0]["state"] == "waiting"


def test_second_worker_with_same_id_refuses(agents_ib: IbRunner) -> None:
    ib = agents_ib
    first = ib.popen("worker")
    client = redis.Redis.from_url(ib.env["IB_REDIS_URL"])
    retry_until(lambda: client.exists(Keys(ib.env["IB_NAMESPACE"]).worker(ib.env["IB_WORKER_ID"])))
    second = ib.run("worker", "--once")
    assert second.returncode == 1 and "already running" in second.stderr
    first.send_signal(signal.SIGTERM)
    first.wait(timeout=15)
    client.close()
