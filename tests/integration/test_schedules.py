"""Scheduled tasks for real: `ib task schedule add/list/delete`, refusals that change nothing, and workers
racing one firing — two `ib worker` processes and eight threads — adding its task exactly once."""

from __future__ import annotations

import json
import threading
from typing import cast

import redis

from bus.tasks.schedules import ScheduleStore, TaskTemplate, fired_task_id
from bus.tasks.task_store import TaskStore
from bus.wire.keys import Keys
from tests.cli import IbRunner

P = "repo"


def store(rds: redis.Redis, keys: Keys) -> ScheduleStore:
    return ScheduleStore(rds, keys, TaskStore(rds, keys, events_maxlen=10_000))


def make_due(rds: redis.Redis, keys: Keys, schedule_id: str, seconds_ago: int = 30) -> int:
    """Set-up: move a schedule's next firing into the past rather than wait for the clock."""
    seconds, _ = rds.time()
    due = int(seconds) - seconds_ago
    rds.zadd(keys.schedules, {schedule_id: due})
    return due


def added_events(rds: redis.Redis, keys: Keys) -> list[dict[str, object]]:
    found = []
    for _id, fields in cast(list[tuple[str, dict[str, str]]], rds.xrange(keys.events)):
        event = json.loads(fields["e"])
        if event["type"] == "task_added":
            found.append(event)
    return found


def test_add_list_delete(ib: IbRunner, rds: redis.Redis, keys: Keys) -> None:
    added = ib.run("task", "schedule", "add", "0 3 * * mon-fri", "Update the dependencies", "--priority", "3")
    assert added.returncode == 0, added.stderr
    assert added.stdout.startswith('sched-1  0 3 * * mon-fri  → "Update the dependencies" [repo] next ')
    ib.run("task", "schedule", "add", "@daily", "Nightly audit", "--id", "nightly", "--body", "look around")
    listed = json.loads(ib.run("task", "schedule", "list", "--json").stdout)
    assert {s["id"]: s["task"]["priority"] for s in listed} == {"sched-1": 3, "nightly": 5}
    assert listed[0]["task"]["project"] == P
    assert ib.run("task", "schedule", "delete", "sched-1").stdout == "deleted sched-1\n"
    assert [s.split()[0] for s in ib.run("task", "schedule", "list").stdout.splitlines()] == ["nightly"]
    schedules = json.loads(ib.run("task", "schedule", "list", "--json").stdout)
    assert schedules[0]["task"]["body"] == "look around"


def test_empty_list_says_how_to_add(ib: IbRunner) -> None:
    done = ib.run("task", "schedule", "list")
    assert done.returncode == 0 and "no schedules; add one with" in done.stdout


def test_refusals_are_one_line_and_store_nothing(ib: IbRunner, rds: redis.Redis, namespace: str) -> None:
    cases = {
        ("* * * * * *", "T"): "6 fields (a seconds field) is not supported",
        ("0 0 30 2 *", "T"): "never fires",
        ("0 0 * * *", "T", "--priority", "11"): "bad priority",
    }
    for args, message in cases.items():
        done = ib.run("task", "schedule", "add", *args)
        assert done.returncode == 1, args
        assert done.stderr.count("\n") == 1 and message in done.stderr, done.stderr
        assert "Traceback" not in done.stderr
    gone = ib.run("task", "schedule", "delete", "nope")
    assert gone.returncode == 1 and "no schedule nope" in gone.stderr
    assert [k for k in rds.scan_iter(match=namespace + "schedule:*")] == []
    slow = ib.run("task", "schedule", "add", "*/2 * * * *", "T", env={"IB_SCHEDULE_MIN_INTERVAL": "300"})
    assert "fires every 120 s, more often than the minimum of 300 s" in slow.stderr


def test_two_worker_processes_add_one_task(agents_ib: IbRunner, rds: redis.Redis, keys: Keys) -> None:
    agents_ib.run("task", "schedule", "add", "*/5 * * * *", "Rotate the logs", "--id", "rotate")
    due = make_due(rds, keys, "rotate")
    workers = [agents_ib.popen("worker", "--once", env={"IB_WORKER_ID": f"racer-{n}"}) for n in range(2)]
    for worker in workers:
        _out, err = worker.communicate(timeout=60)
        assert worker.returncode == 0, err
    events = added_events(rds, keys)
    assert [(e["task"], e["data"]["schedule"]) for e in events] == [(fired_task_id("rotate", due), "rotate")]  # type: ignore[index]
    task = json.loads(agents_ib.run("task", "show", fired_task_id("rotate", due), "--json").stdout)
    assert (task["title"], task["schedule"], task["status"]) == ("Rotate the logs", "rotate", "ready")
    nxt = json.loads(agents_ib.run("task", "schedule", "list", "--json").stdout)[0]
    assert nxt["next_due"] > due and nxt["last_task"] == task["id"]


def test_eight_racers_twenty_firings_each_once(rds: redis.Redis, keys: Keys) -> None:
    schedules = store(rds, keys)
    schedules.add("* * * * *", TaskTemplate(title="Tick", project="race"), "tick")
    dues = []
    for round_ in range(20):
        dues.append(make_due(rds, keys, "tick", seconds_ago=60 * (21 - round_)))
        start = threading.Barrier(8)
        added: list[str] = []

        def racer(name: str, start: threading.Barrier, added: list[str]) -> None:
            mine = store(rds, keys)
            start.wait()
            added.extend(t.id for t in mine.fire_due(name))

        threads = [threading.Thread(target=racer, args=(f"w{n}", start, added)) for n in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert added == [fired_task_id("tick", dues[-1])], round_
    assert sorted(str(e["task"]) for e in added_events(rds, keys)) == sorted(
        fired_task_id("tick", d) for d in dues
    )


def test_a_deleted_schedule_never_fires(rds: redis.Redis, keys: Keys) -> None:
    schedules = store(rds, keys)
    schedules.add("@hourly", TaskTemplate(title="Gone", project="race"), "gone")
    make_due(rds, keys, "gone")
    schedules.delete("gone")
    assert schedules.fire_due("w") == []
    assert added_events(rds, keys) == []
