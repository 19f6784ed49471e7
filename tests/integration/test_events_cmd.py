"""`ib events`: follow the stream as JSONL with filters, from now / an id / a group; signals exit 0."""

from __future__ import annotations

import json
import signal
import subprocess
import threading
from collections.abc import Iterator

import pytest
import redis

from bus.events.envelope import make_event
from bus.events.streams import publish
from bus.readers.follow import EventFilter, follow_group
from bus.wire.keys import Keys
from tests.cli import IbRunner
from tests.waiting import retry_until


class Follower:
    """An `ib events` process whose output lines are collected by a thread."""

    def __init__(self, proc: subprocess.Popen[str]) -> None:
        self.proc = proc
        self.lines: list[dict[str, object]] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(json.loads(line))

    def stop(self, sig: int = signal.SIGINT) -> int:
        self.proc.send_signal(sig)
        code = self.proc.wait(timeout=10)
        self._reader.join(timeout=5)
        return code


@pytest.fixture
def follow(ib: IbRunner) -> Iterator[list[Follower]]:
    started: list[Follower] = []
    yield started
    for f in started:
        if f.proc.poll() is None:
            f.proc.kill()
            f.proc.wait()


def _start(ib: IbRunner, follow: list[Follower], *args: str) -> Follower:
    f = Follower(ib.popen("events", *args))
    follow.append(f)
    return f


def _emit(rds: redis.Redis, keys: Keys, type_: str, project: str | None, msg: str) -> str:
    return publish(rds, keys, make_event(type_, msg, project=project), maxlen=10_000)


def _wait_ready(ib: IbRunner, rds: redis.Redis, keys: Keys, f: Follower) -> None:
    """Publish probes until the follower shows one: then it is surely reading."""

    def probe() -> bool:
        _emit(rds, keys, "state", "probe", "probe")
        return any(e.get("msg") == "probe" for e in f.lines)

    retry_until(probe, timeout=20, interval=0.2, what="ib events to start")


def test_follows_from_now_with_filters(
    ib: IbRunner, rds: redis.Redis, keys: Keys, follow: list[Follower]
) -> None:
    _emit(rds, keys, "task_done", "backend", "before start")
    f = _start(ib, follow, "--project", "backend", "--project", "probe", "--type", "task_done,state")
    _wait_ready(ib, rds, keys, f)
    _emit(rds, keys, "task_done", "backend", "wanted")
    _emit(rds, keys, "task_done", "frontend", "other project")
    _emit(rds, keys, "task_ready", "backend", "other type")
    _emit(rds, keys, "task_done", "backend", "wanted too")
    retry_until(lambda: any(e["msg"] == "wanted too" for e in f.lines))
    assert f.stop() == 0
    msgs = [e["msg"] for e in f.lines if e["msg"] != "probe"]
    assert msgs == ["wanted", "wanted too"]


def test_since_id_replays_history(ib: IbRunner, rds: redis.Redis, keys: Keys, follow: list[Follower]) -> None:
    first = _emit(rds, keys, "complete", None, "a")
    _emit(rds, keys, "complete", None, "b")
    _emit(rds, keys, "complete", None, "c")
    f = _start(ib, follow, "--since", first)
    retry_until(lambda: len(f.lines) >= 2)
    assert f.stop(signal.SIGTERM) == 0
    assert [e["msg"] for e in f.lines] == ["b", "c"]


def test_group_acks_and_resumes(ib: IbRunner, rds: redis.Redis, keys: Keys, follow: list[Follower]) -> None:
    f = _start(ib, follow, "--group", "scripts", "--since", "0")
    _emit(rds, keys, "complete", None, "one")
    retry_until(lambda: len(f.lines) >= 1)
    assert f.stop() == 0
    _emit(rds, keys, "complete", None, "two")  # arrives while no follower runs
    g = _start(ib, follow, "--group", "scripts")
    retry_until(lambda: len(g.lines) >= 1)
    assert g.stop() == 0
    assert [e["msg"] for e in f.lines] == ["one"]
    assert [e["msg"] for e in g.lines] == ["two"]
    pending = rds.xpending(keys.events, "scripts")
    assert pending["pending"] == 0


def test_a_filtered_group_leaves_what_it_does_not_show_to_the_group(
    ib: IbRunner, rds: redis.Redis, keys: Keys, follow: list[Follower]
) -> None:
    f = _start(ib, follow, "--group", "scripts", "--since", "0", "--type", "complete,state")
    _wait_ready(ib, rds, keys, f)
    _emit(rds, keys, "waiting", None, "not shown")
    _emit(rds, keys, "complete", None, "shown")
    retry_until(lambda: any(e["msg"] == "shown" for e in f.lines))
    assert f.stop() == 0
    assert "not shown" not in [e["msg"] for e in f.lines]
    assert rds.xpending(keys.events, "scripts")["pending"] == 1  # the waiting event, unacknowledged
    seen: list[str] = []
    follow_group(  # a follower of the group without a filter takes it over
        rds,
        keys,
        group_name="scripts",
        since="0",
        wanted=EventFilter(),
        emit=lambda event: seen.append(str(event["msg"])),
        keep_going=lambda: not seen,
        claim_idle_ms=0,
    )
    assert seen == ["not shown"]
    assert rds.xpending(keys.events, "scripts")["pending"] == 0


def test_bad_option_is_one_clear_error(ib: IbRunner) -> None:
    done = ib.run("events", "--bogus")
    assert done.returncode == 2
    assert "No such option" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("argv", [["--type", ""], ["--type", ","], ["--project", " "]], ids=str)
def test_an_empty_filter_is_refused_rather_than_read_as_none(ib: IbRunner, argv: list[str]) -> None:
    done = ib.run("events", *argv, timeout=10)  # it followed every event, for ever
    assert done.returncode == 2
    assert "is empty" in done.stderr and len(done.stderr.strip().splitlines()) == 1
