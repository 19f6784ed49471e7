"""The worker pushes what the person must act on into their own sessions' inboxes: recorded by the
primary session's hook, once per session, acknowledged by acting, kept for the next session, folded in
bursts, cut when huge, stale sessions dropped with a line in `ib ps`, no loss or repeat across a worker
restart. The session here is a stand-in for Claude Code's inbox socket (tests/session_inbox.py); the
real CLI is in test_session_push_claude.py."""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from bus.events.envelope import make_event
from bus.events.streams import publish
from bus.inbox.session_inbox import this_host
from bus.wire.keys import Keys
from tests.bot_process import worker_running
from tests.cli import IbRunner
from tests.session_inbox import RecordingInbox, record_session
from tests.waiting import retry_until

TIMEOUT = 30.0
ID = re.compile(r"\[(\d+-\d+)\]")
NOBODY = 65534  # the uid and gid of `nobody`: another user than the suite's


@pytest.fixture
def sockets() -> Iterator[Path]:
    """A short folder for unix sockets (their paths may not pass 107 bytes)."""
    folder = Path(tempfile.mkdtemp(prefix="ibs-", dir="/tmp"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def _ready(rds: redis.Redis, keys: Keys, repo: Path) -> None:
    """The pusher's group exists once its heartbeat shows: events from now on are pushed."""
    retry_until(lambda: rds.exists(keys.session_pusher(this_host(), os.path.realpath(repo))), TIMEOUT)


def _event(rds: redis.Redis, keys: Keys, kind: str, agent: str, msg: str = "") -> str:
    return publish(rds, keys, make_event(kind, msg or f"{agent} {kind}", sender=agent, agent=agent), 10_000)


def _ids(texts: list[str]) -> list[str]:
    """The event ids the messages name, in order (each message names each of its events once)."""
    return [i for text in texts for i in ID.findall(text)]


def _hook(ib: IbRunner, repo: Path, session_id: str, inbox: RecordingInbox | None) -> str:
    env = (
        {"CLAUDE_CODE_MESSAGING_SOCKET": str(inbox.path), "CLAUDE_CODE_MESSAGING_TOKEN": inbox.token}
        if inbox
        else {}
    )
    payload = {"hook_event_name": "UserPromptSubmit", "session_id": session_id, "cwd": str(repo)}
    done = ib.run("hook", "post-tool-use", stdin=json.dumps(payload), env=env)
    assert (done.returncode, done.stderr) == (0, "")
    return done.stdout


def test_the_hook_records_the_session_and_each_event_reaches_it_once(
    agents_ib: IbRunner, rds: redis.Redis, keys: Keys, repo: Path, tmp_path: Path, sockets: Path
) -> None:
    with (
        worker_running(agents_ib, tmp_path / "worker.log", rds, keys),
        RecordingInbox(sockets / "1.sock") as inbox,
    ):
        _ready(rds, keys, repo)
        rds.sadd(keys.agents, "builder")
        assert _hook(agents_ib, repo, "s-1", inbox) == ""  # pushed: no reminder to start a listener
        first = _event(rds, keys, "permission", "builder", "builder asks to use Bash: make")
        retry_until(inbox.texts, TIMEOUT, what="the push")
        assert inbox.tokens == [inbox.token]
        assert "builder permission: builder asks to use Bash: make → ib approve builder" in inbox.texts()[0]
        assert first in inbox.texts()[0]
        second = _event(rds, keys, "complete", "greeter")
        retry_until(lambda: len(inbox.texts()) == 2, TIMEOUT, what="the second push")
        assert second in inbox.texts()[1] and first not in inbox.texts()[1]  # never twice into a session
        assert "ib diff greeter, then ib merge greeter" in inbox.texts()[1]
        _event(rds, keys, "state", "greeter")  # not for the person
        assert agents_ib.run("ack", first).stdout.startswith("acknowledged 1")
        listed = agents_ib.run("ack").stdout
        assert second in listed and first not in listed


def test_what_is_not_acknowledged_waits_for_the_next_session(
    agents_ib: IbRunner, rds: redis.Redis, keys: Keys, repo: Path, tmp_path: Path, sockets: Path
) -> None:
    with worker_running(agents_ib, tmp_path / "worker.log", rds, keys):
        _ready(rds, keys, repo)
        asked = _event(rds, keys, "question", "asker", "asker asks: which database?")
        done = _event(rds, keys, "complete", "greeter")
        retry_until(lambda: rds.zcard(keys.push_pending) == 2, TIMEOUT, what="two pending events")
        with RecordingInbox(sockets / "2.sock") as later:
            record_session(rds, keys, "s-2", later.path, later.token, repo)
            retry_until(later.texts, TIMEOUT, what="the push into the new session")
            assert _ids(later.texts()) == [asked, done]  # folded: one message, oldest first
            assert len(later.texts()) == 1
        assert agents_ib.run("ack", "--all").stdout.startswith("acknowledged 2")
        with RecordingInbox(sockets / "3.sock") as third:
            record_session(rds, keys, "s-3", third.path, third.token, repo)
            _event(rds, keys, "complete", "marker")
            retry_until(third.texts, TIMEOUT, what="the marker's push")
            assert asked not in "".join(third.texts()) and done not in "".join(third.texts())


def test_stale_sessions_are_dropped_with_a_line_and_lose_nothing(
    agents_ib: IbRunner, rds: redis.Redis, keys: Keys, repo: Path, tmp_path: Path, sockets: Path
) -> None:
    killed = sockets / "killed.sock"
    with socket.socket(socket.AF_UNIX) as bound:  # the file stays, nobody answers: a session after kill -9
        bound.bind(str(killed))
    plain = sockets / "plain.sock"
    plain.write_text("")
    fifo = sockets / "fifo.sock"
    os.mkfifo(fifo)
    foreign = sockets / "foreign.sock"  # a live socket, but another user's: never written to
    with socket.socket(socket.AF_UNIX) as listening:
        listening.bind(str(foreign))
        listening.listen()
        os.chown(foreign, NOBODY, NOBODY)  # the suite runs as root (CI, the agents' box)
        for name, path in (
            ("killed", killed),
            ("plain", plain),
            ("fifo", fifo),
            ("gone", sockets / "gone.sock"),
            ("foreign", foreign),
        ):
            record_session(rds, keys, name, path, "t", repo)
        with worker_running(agents_ib, tmp_path / "worker.log", rds, keys):
            _ready(rds, keys, repo)
            event = _event(rds, keys, "complete", "greeter")
            retry_until(lambda: not rds.smembers(keys.session_inboxes), TIMEOUT, what="every session dropped")
            shown = agents_ib.run("ps").stdout
            assert "nobody listens on its socket (the session was killed)" in shown
            assert f"{plain} is a file, not a socket" in shown
            assert f"{fifo} is a FIFO, not a socket" in shown
            assert "its socket is gone (the session exited)" in shown
            assert f"{foreign} belongs to another user (uid {NOBODY})" in shown
            assert "Traceback" not in shown
            listening.setblocking(False)
            with pytest.raises(BlockingIOError):  # nobody ever connected to the other user's socket
                listening.accept()
            assert rds.zrange(keys.push_pending, 0, -1) == [event]  # kept for `ib listen`, the next session
            listened = agents_ib.run("listen", "--timeout", "5")
            assert event in listened.stdout
            assert rds.zcard(keys.push_pending) == 0  # the listener's read acknowledged it


def test_another_repositorys_session_gets_nothing_and_two_sessions_both_get_it(
    agents_ib: IbRunner, rds: redis.Redis, keys: Keys, repo: Path, tmp_path: Path, sockets: Path
) -> None:
    elsewhere = tmp_path / "other-repo"
    elsewhere.mkdir()
    with (
        worker_running(agents_ib, tmp_path / "worker.log", rds, keys),
        RecordingInbox(sockets / "a.sock") as one,
        RecordingInbox(sockets / "b.sock") as two,
        RecordingInbox(sockets / "c.sock") as other,
    ):
        _ready(rds, keys, repo)
        record_session(rds, keys, "one", one.path, one.token, repo)
        record_session(rds, keys, "two", two.path, two.token, repo)
        record_session(rds, keys, "other", other.path, other.token, elsewhere)
        event = _event(rds, keys, "waiting", "builder")
        retry_until(lambda: one.texts() and two.texts(), TIMEOUT, what="both sessions")
        assert event in one.texts()[0] and event in two.texts()[0]
        _event(rds, keys, "complete", "builder")
        retry_until(lambda: len(one.texts()) == 2, TIMEOUT, what="the second push")
        assert other.texts() == []


def test_a_burst_is_folded_and_a_huge_event_is_cut(
    agents_ib: IbRunner, rds: redis.Redis, keys: Keys, repo: Path, tmp_path: Path, sockets: Path
) -> None:
    with (
        worker_running(agents_ib, tmp_path / "worker.log", rds, keys),
        RecordingInbox(sockets / "b.sock") as inbox,
    ):
        _ready(rds, keys, repo)
        record_session(rds, keys, "s", inbox.path, inbox.token, repo)
        huge = _event(rds, keys, "complete", "talker", "x" * 2_000_000)
        burst = [_event(rds, keys, "complete", f"agent-{n}") for n in range(100)]
        retry_until(lambda: set(burst) <= set(_ids(inbox.texts())), TIMEOUT, what="all 100 events")
        ids = _ids(inbox.texts())
        assert sorted(ids) == sorted([huge, *burst])  # every one, none twice
        assert len(inbox.texts()) <= 5  # folded: the inbox lets a sender about 30 messages
        first = inbox.texts()[0]
        assert "… (cut) → ib diff talker" in first and len(first) < 1_000


def test_a_worker_restarted_mid_push_loses_none_and_pushes_none_twice(
    agents_ib: IbRunner, rds: redis.Redis, keys: Keys, repo: Path, tmp_path: Path, sockets: Path
) -> None:
    with RecordingInbox(sockets / "r.sock") as inbox:
        record_session(rds, keys, "s", inbox.path, inbox.token, repo)
        sent: list[str] = []
        with worker_running(agents_ib, tmp_path / "worker.log", rds, keys):
            _ready(rds, keys, repo)
            sent += [_event(rds, keys, "complete", f"a-{n}") for n in range(30)]
        sent += [_event(rds, keys, "complete", f"b-{n}") for n in range(30)]  # while no worker runs
        with worker_running(agents_ib, tmp_path / "worker.log", rds, keys):
            sent += [_event(rds, keys, "complete", f"c-{n}") for n in range(30)]
            retry_until(lambda: set(sent) <= set(_ids(inbox.texts())), TIMEOUT, what="all 90 events")
            assert sorted(_ids(inbox.texts())) == sorted(sent)


def test_pushing_off_leaves_the_listener_and_the_reminder(
    agents_ib: IbRunner, rds: redis.Redis, keys: Keys, repo: Path, tmp_path: Path, sockets: Path
) -> None:
    agents_ib.env["IB_PUSH_TO_SESSION"] = "false"
    rds.sadd(keys.agents, "builder")
    with (
        worker_running(agents_ib, tmp_path / "worker.log", rds, keys),
        RecordingInbox(sockets / "o.sock") as inbox,
    ):
        reminded = json.loads(_hook(agents_ib, repo, "s", inbox))
        assert "Notification listener is not running" in reminded["hookSpecificOutput"]["additionalContext"]
        event = _event(rds, keys, "complete", "builder")
        assert event in agents_ib.run("listen", "--timeout", "5").stdout
        assert inbox.texts() == []


def test_a_session_without_an_inbox_is_told_why_it_needs_the_listener(
    ib: IbRunner, rds: redis.Redis, keys: Keys, repo: Path
) -> None:
    rds.sadd(keys.agents, "builder")
    context = json.loads(_hook(ib, repo, "s", None))["hookSpecificOutput"]["additionalContext"]
    assert "no inbox" in context and "CLAUDE_CODE_HARBOR_KITE=0" in context
    assert not rds.smembers(keys.session_inboxes)


def test_acting_on_an_agent_acknowledges_its_events(
    agents_ib: IbRunner, rds: redis.Redis, keys: Keys, repo: Path, tmp_path: Path
) -> None:
    with worker_running(agents_ib, tmp_path / "worker.log", rds, keys):
        _ready(rds, keys, repo)
        spawned = agents_ib.run(
            "new-agent", "Do it.\nfake: permission touch made.txt\nfake: done", "--name", "maker"
        )
        assert spawned.returncode == 0, spawned.stderr
        asked = retry_until(lambda: rds.smembers(keys.push_agent("maker")), TIMEOUT, what="the permission")
        other = _event(rds, keys, "complete", "someone-else")
        retry_until(lambda: rds.zscore(keys.push_pending, other) is not None, TIMEOUT)
        assert agents_ib.run("approve", "maker").returncode == 0
        assert not {rds.zscore(keys.push_pending, i) for i in asked} - {None}  # seen: the person acted
        assert rds.zscore(keys.push_pending, other) is not None
