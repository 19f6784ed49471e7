"""Consumers killed at the worst moment: a listener between printing and acknowledging (printed again by
the next one, never lost), the worker in the middle of `/auto`, and an agent's session while it holds
a task claim."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
from pathlib import Path

import pytest
import redis

from bus.events.envelope import make_event
from bus.events.streams import publish
from bus.wire.keys import Keys
from tests.cli import IbRunner
from tests.faults.tally import Tally
from tests.integration.test_auto_e2e import Worker, sequence
from tests.reads import reached
from tests.streams import stream_entries
from tests.waiting import retry_until

BIG = "x" * 2000  # 60 of these overflow a pipe (64 KiB): the listener blocks in print, before its ack


def test_listener_killed_between_print_and_ack(
    ib: IbRunner, rds: redis.Redis, keys: Keys, tally: Tally
) -> None:
    sent = [f"m{i:02d}" for i in range(60)]
    for text in sent:
        publish(rds, keys, make_event("complete", f"{text} {BIG}"), 10_000)
    env = {"IB_HEARTBEAT_TTL": "2"}
    first = ib.popen("listen", "--timeout", "30", "--types", "complete", env=env)
    retry_until(
        lambda: (
            rds.xinfo_groups(keys.events) and rds.xpending(keys.events, "listen:default")["pending"] == 60
        ),
        30,
        0.02,
        "the listener to read every event",
    )
    assert first.stdout is not None  # it has printed (without reading, so the pipe stays full and it blocks)
    assert select.select([first.stdout], [], [], 10)[0], "the listener printed nothing"
    holder = rds.get(keys.listener("default"))  # `host:pid:…`: the listening process (served, or ib)
    assert holder is not None
    os.kill(int(str(holder).split(":")[1]), signal.SIGKILL)
    out, _ = first.communicate(timeout=10)
    assert first.returncode == -signal.SIGKILL
    printed_first = [json.loads(line)["msg"].split()[0] for line in out.splitlines() if line.endswith("}")]
    assert 0 < len(printed_first) < 60

    def second_run() -> subprocess.CompletedProcess[str] | None:
        done = ib.run("listen", "--timeout", "10", "--types", "complete", env=env)
        return None if "already running" in done.stderr else done

    second = retry_until(second_run, 15, 0.2, "the killed listener's heartbeat to expire")
    printed_second = [json.loads(line)["msg"].split()[0] for line in second.stdout.splitlines()]
    assert rds.xpending(keys.events, "listen:default")["pending"] == 0
    row = tally.count(
        "`ib listen` killed (-9) between print and ack",
        sent,
        printed_second,
        note=f"the killed one printed {len(printed_first)} first; the next printed all again (at least once)",
    )
    assert (row.lost, row.twice) == (0, 0) and printed_second == sent


def _task_status(ib: IbRunner, task: str) -> dict[str, object]:
    done = ib.run("task", "show", task, "--json")
    assert done.returncode == 0, done.stderr
    return dict(json.loads(done.stdout))


def test_agent_session_killed_while_holding_a_claim(
    agents_ib: IbRunner, rds: redis.Redis, keys: Keys, tmux_socket: str, tally: Tally
) -> None:
    ib = agents_ib
    assert ib.run("task", "add", "Paint", "--id", "paint").returncode == 0
    done = ib.run("new-agent", "Hold on.\nfake: wait", "--name", "holder", "--task", "paint")
    assert done.returncode == 0, done.stderr
    assert _task_status(ib, "paint")["claimed_by"] == "holder"
    assert ib.run("worker", "--once").returncode == 0
    session = str(rds.hget(keys.agent("holder"), "session"))
    subprocess.run(["tmux", "-L", tmux_socket, "kill-session", "-t", session], check=True)

    assert ib.run("worker", "--once").returncode == 0  # the watcher sees the pane gone
    task = _task_status(ib, "paint")
    failed = [json.loads(f["e"]) for _i, f in stream_entries(rds, keys.events) if '"task_failed"' in f["e"]]
    assert (task["status"], task["attempt"]) == ("ready", 1)
    assert [e["data"]["reason"] for e in failed] == [
        "agent holder stopped (its session ended) while holding the task"
    ]
    assert failed[0]["data"]["will_retry"] is True
    row = tally.count(
        "an agent's tmux session killed while it holds a task claim",
        ["paint"],
        [e["task"] for e in failed],
        note="claim failed and released at the next pane look, attempt 1/3 counted; task ready again",
    )
    assert (row.lost, row.twice) == (0, 0)


@pytest.mark.timeout(300)
def test_worker_killed_mid_auto(
    agents_ib: IbRunner, rds: redis.Redis, keys: Keys, tmp_path: Path, tally: Tally
) -> None:
    ib = agents_ib
    gate = tmp_path / "gate"
    gate.mkdir()
    tasks = ["t1", "t2", "t3"]
    for priority, task in zip((9, 8, 7), tasks, strict=True):
        wait = f"fake: run ib log --quiet at-work && while [ ! -f {gate}/go ]; do sleep 0.1; done"
        body = [f"fake: write {task}.txt {task}", f"fake: commit add {task}"]
        body += [wait] if task == "t2" else []
        body += [f"fake: run ib task done {task}", "fake: done"]
        done = ib.run(
            "task",
            "add",
            task,
            "--id",
            task,
            "--project",
            "p",
            "--priority",
            str(priority),
            "--body",
            "\n".join(body),
        )
        assert done.returncode == 0, done.stderr
    worker = Worker(ib, rds, keys)
    worker.start()
    follower = ib.popen("auto", "--project", "p", "--worktrees", "--json")
    try:
        retry_until(lambda: reached(ib.cwd, "t2", "at-work"), 120, 0.1, "t2 at work")
        worker.kill()
        (gate / "go").touch()
        retry_until(lambda: ("task_done", "t2") in sequence(rds, keys, "p"), 60, 0.1, "t2 done, worker down")
        worker.start()
        _out, err = follower.communicate(timeout=240)
        assert follower.returncode == 0, err
    finally:
        worker.stop()
    steps = sequence(rds, keys, "p")
    done_once = [task for kind, task in steps if kind == "task_done"]
    merged = [task.removeprefix("merge-") for kind, task in steps if kind == "merge_merged"]
    assert steps[-1] == ("auto_finished", "")
    row = tally.count(
        "worker kill -9 in the middle of `ib auto --worktrees` (3 tasks), then started again",
        tasks,
        done_once,
        note=f"{len(set(merged))}/3 merged, merges twice: {len(merged) - len(set(merged))}; claims twice: "
        f"{sum(1 for k, _t in steps if k == 'task_claimed') - 3}",
    )
    assert (row.lost, row.twice) == (0, 0) and sorted(merged) == tasks
