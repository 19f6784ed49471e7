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

from bus.connection.clients import client_for
from bus.events.envelope import EID_FIELD
from bus.wire.keys import Keys
from tests.cli import IbRunner
from tests.faults.tally import Tally
from tests.integration.test_auto_e2e import Worker, add_task, sequence
from tests.reads import reached
from tests.redis_server import RedisServer
from tests.sentinel_servers import SentinelSet
from tests.streams import stream_entries
from tests.waiting import retry_until

PRODUCERS = 2
AFTER_FAILOVER = 12  # events sent to the new primary before the storm ends
MOST = 600  # a bound on each producer, should the failover never come (calls while none answers spool fast)


def _stop_payload(ib: IbRunner, text: str) -> str:
    return json.dumps({"session_id": "s", "cwd": str(ib.cwd), "last_assistant_message": f"{text}\nWAITING"})


def _send(ib: IbRunner, text: str, hook: bool) -> subprocess.CompletedProcess[str]:
    if hook:
        return ib.run("hook", "stop", stdin=_stop_payload(ib, text), env={"IB_AGENT_ID": "a-" + text})
    return ib.run("notify", text)


def _seen(server: RedisServer, namespace: str) -> tuple[list[str], Counter[str]]:
    """The message key of every event in the stream (the notify text, or the hook's last message), and
    how often each client-made envelope id is there (the stores' events, made in Lua, carry none)."""
    keys, ids = [], Counter[str]()
    for _id, fields in stream_entries(server.client(), namespace + "events"):
        event = json.loads(fields["e"])
        last = event.get("data", {}).get("last_message")
        keys.append(last.split("\n")[0] if last else event.get("msg", ""))
        if EID_FIELD in event:
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


class Storm:
    """`PRODUCERS` threads sending `ib notify` calls and Stop hooks (a quarter) until told to stop; what each
    sent, which calls failed, which kept their event in the spool, and each call's wall time by phase."""

    def __init__(self, ib: IbRunner) -> None:
        self.ib = ib
        self.sent: list[str] = []
        self.failures: list[str] = []
        self.kept: list[str] = []  # sent while no primary answered: spooled, flushed by a later call
        self.walls: dict[str, list[float]] = {"before": [], "after": []}
        self.phase = "before"
        self.lock = threading.Lock()
        self.enough = threading.Event()
        self.threads = [threading.Thread(target=self._produce, args=(n,)) for n in range(PRODUCERS)]

    def __enter__(self) -> Storm:
        for t in self.threads:
            t.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self.enough.set()
        for t in self.threads:
            t.join()

    def _produce(self, n: int) -> None:
        for i in range(MOST):
            if self.enough.is_set():
                return
            text = f"p{n}-{i}"
            with self.lock:
                self.sent.append(text)
                when = self.phase
            started = time.monotonic()
            done = _send(self.ib, text, hook=i % 4 == 0)
            self.walls[when].append(time.monotonic() - started)
            if done.returncode != 0:
                self.failures.append(f"{text}: {done.stderr}")
            if "kept in" in done.stderr:
                self.kept.append(text)

    def promoted(self) -> int:
        """Marks the failover done; how many were sent by then."""
        with self.lock:
            self.phase = "after"
            return len(self.sent)

    def timing(self) -> str:
        before, after = _p50(self.walls["before"]), _p50(self.walls["after"])
        return f"call wall time p50 {before} s before the kill, {after} s after"


def _storm_through_a_failover(ib: IbRunner, deployment: SentinelSet, tally: Tally, tmp_path: Path) -> None:
    ib.env["IB_REDIS_URL"] = deployment.url()  # WAIT 1 is on by default behind Sentinel
    namespace = ib.env["IB_NAMESPACE"]
    heavy = client_for(deployment.url())  # the worker's kind of client, made before the failover
    with Storm(ib) as storm:
        retry_until(lambda: heavy.xlen(namespace + "events") >= 10, 30, 0.01, "the stream to start")
        deployment.primary.stop(signal.SIGKILL)
        killed_at = len(storm.sent)
        promoted = retry_until(deployment.promoted, 30, 0.1, "a replica to be promoted")
        promoted_at = storm.promoted()
        retry_until(
            lambda: len(storm.sent) >= promoted_at + AFTER_FAILOVER, 30, 0.05, "events after failover"
        )
    assert storm.failures == []
    assert ib.run("spool", "--flush").returncode == 0
    seen, ids = _seen(promoted, namespace)
    spooled = _spooled_lines(tmp_path / "spool")
    row = tally.count(
        f"Sentinel failover mid-stream: primary kill -9 in {PRODUCERS} streams of notifies and Stop hooks",
        storm.sent,
        seen,
        note=f"{len(storm.sent) - killed_at} sent after the kill, {len(storm.kept)} of them spooled during "
        f"the failover, {spooled} spooled lines left after the flush; {storm.timing()}",
    )
    assert (row.lost, row.twice, spooled) == (0, 0, 0)
    assert max(ids.values()) == 1
    retry_until(
        lambda: _length(heavy, namespace) == len(seen), 30, 0.1, "the heavy client to follow the failover"
    )
    assert storm.kept, "no call fell in the failover: the test did not test it"


TASKS = ("t1", "t2", "t3")


@pytest.mark.timeout(300)
def test_the_primary_is_killed_during_an_auto_run_and_a_stream_of_notifies(
    agents_ib: IbRunner, tally: Tally, tmp_path: Path
) -> None:
    deployment = SentinelSet(tmp_path / "sentinel", replicas=2).start()
    try:
        _auto_through_a_failover(agents_ib, deployment, tally, tmp_path)
    finally:
        deployment.stop()


def _add_tasks(ib: IbRunner, gate: Path) -> None:
    """Three tasks for fake agents; t2 holds until `gate/go` exists, so the primary dies while it works."""
    for priority, task in zip((9, 8, 7), TASKS, strict=True):
        hold = f"fake: run ib log --quiet at-work && while [ ! -f {gate}/go ]; do sleep 0.1; done"
        lines = [f"fake: write {task}.txt {task}", f"fake: commit add {task}"]
        lines += [hold] if task == "t2" else []
        lines += [f"fake: run ib task done {task}", "fake: done"]
        add_task(ib, task, priority, "p", *lines)


def _auto_through_a_failover(ib: IbRunner, deployment: SentinelSet, tally: Tally, tmp_path: Path) -> None:
    ib.env["IB_REDIS_URL"] = deployment.url()
    namespace = ib.env["IB_NAMESPACE"]
    keys = Keys(namespace)
    gate = tmp_path / "gate"
    gate.mkdir()
    _add_tasks(ib, gate)
    heavy = client_for(deployment.url())
    worker = Worker(ib, heavy, keys)
    worker.start()
    follower = ib.popen("auto", "--project", "p", "--worktrees", "--json")
    try:
        with Storm(ib) as storm:
            retry_until(lambda: reached(ib.cwd, "t2", "at-work"), 120, 0.1, "t2 at work")
            retry_until(lambda: len(storm.sent) >= 10, 30, 0.01, "the stream to start")
            deployment.primary.stop(signal.SIGKILL)
            killed_at = len(storm.sent)
            promoted = retry_until(deployment.promoted, 30, 0.1, "a replica to be promoted")
            promoted_at = storm.promoted()
            (gate / "go").touch()
            retry_until(
                lambda: len(storm.sent) >= promoted_at + AFTER_FAILOVER, 30, 0.05, "events after failover"
            )
        _out, err = follower.communicate(timeout=240)
        assert follower.returncode == 0, f"{err}\nwhat the agents' commands answered:\n{_answers(tmp_path)}"
    finally:
        if follower.poll() is None:
            follower.kill()
        worker.stop()
    assert storm.failures == []
    assert ib.run("spool", "--flush").returncode == 0
    seen, ids = _seen(promoted, namespace)
    steps = sequence(promoted.client(), keys, "p")
    done_once = [task for kind, task in steps if kind == "task_done"]
    merged = [task.removeprefix("merge-") for kind, task in steps if kind == "merge_merged"]
    claims = sum(1 for kind, _task in steps if kind == "task_claimed")
    notes = (
        f"{len(storm.sent) - killed_at} notifies and hooks sent after the kill, {len(storm.kept)} spooled "
        f"and flushed; /auto: {len(set(done_once))}/3 done, {len(set(merged))}/3 merged, "
        f"done twice {len(done_once) - len(set(done_once))}, merges twice {len(merged) - len(set(merged))}, "
        f"claims twice {claims - len(TASKS)}"
    )
    row = tally.count(
        "Sentinel failover during `ib auto --worktrees` (3 tasks) and 2 streams of notifies and Stop hooks",
        [*storm.sent, *TASKS],
        [*seen, *done_once],
        note=notes,
    )
    assert (row.lost, row.twice) == (0, 0)
    assert max(ids.values()) == 1
    assert sorted(merged) == list(TASKS) and claims == len(TASKS)
    assert steps[-1] == ("auto_finished", "")
    assert _spooled_lines(tmp_path / "spool") == 0
    assert storm.kept, "no call fell in the failover: the test did not test it"


def _answers(tmp_path: Path) -> str:
    """Each command the fake agents ran and what it answered, from their transcripts (seen once beside a
    CPU hog: `ib auto` paused on "t2 completed, but its task t2 is still open")."""
    asked: dict[str, str] = {}
    lines = []
    for transcript in sorted((tmp_path / "transcripts").rglob("*.jsonl")):
        for line in transcript.read_text().splitlines():
            for block in json.loads(line).get("message", {}).get("content", []):
                if not isinstance(block, dict):
                    continue
                if block.get("type") == "tool_use":
                    asked[block["id"]] = str(block.get("input", {}).get("command", block.get("name")))
                elif block.get("type") == "tool_result":
                    command = asked.get(block["tool_use_id"])
                    lines.append(f"{transcript.stem}: {command} -> {block['content']!r}")
    return "\n".join(lines)


def _length(client: redis.Redis, namespace: str) -> int | None:
    """The events stream's length as `client` reads it, or None while it finds no primary."""
    try:
        return client.xlen(namespace + "events")
    except redis.ConnectionError:
        return None


def _p50(walls: list[float]) -> str:
    return f"{statistics.median(walls):.2f}" if walls else "-"


@pytest.mark.timeout(120)
def test_a_command_run_while_the_primary_is_gone_waits_for_the_new_one(ib: IbRunner, tmp_path: Path) -> None:
    """An agent's `ib task done` that ran in a failover failed, its task stayed open and /auto paused:
    a command now waits out the failover (the sentinels answer, the primary they name does not), saying
    so once, and then does its work once on the new primary."""
    deployment = SentinelSet(tmp_path / "sentinel", replicas=2).start()  # one to promote, one to confirm
    try:
        ib.env["IB_REDIS_URL"] = deployment.url()
        add_task(ib, "before", 1, "p", "added before the kill")
        deployment.primary.stop(signal.SIGKILL)
        added = ib.run("task", "add", "during", "--id", "during", "--project", "p")
        assert added.returncode == 0, added.stderr
        assert added.stderr.count("waiting up to 60 s for a new primary") == 1, added.stderr
        promoted = deployment.promoted()
        assert promoted is not None
        listed = json.loads(ib.run("task", "list", "--project", "p", "--json").stdout)
        assert sorted(t["id"] for t in listed) == ["before", "during"]
    finally:
        deployment.stop()
