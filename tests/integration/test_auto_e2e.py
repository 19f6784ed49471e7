"""`ib auto` end to end with a real worker, fake agents, git, tmux and Redis: the seed's example project with
worktrees (a merge conflict resolved by a merge agent, the worker killed and restarted mid-run), and the
loop without worktrees, fed to the project's one agent, then stopped."""

from __future__ import annotations

import json
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import pytest
import redis

from bus.stores.auto_state import AutoState
from bus.stores.auto_store import AutoStore
from bus.tasks.task_store import TaskStore
from bus.wire.keys import Keys
from tests.cli import IB, IbRunner, git
from tests.reads import reached
from tests.waiting import retry_until
from worker.auto.decide import Claim, GiveTask, action_to_dict

SEQUENCE_TYPES = (
    "auto_started",
    "task_claimed",
    "spawned",
    "task_done",
    "task_ready",
    "merge_ready",
    "merge_merged",
    "merge_conflict",
    "merge_failed",
    "task_failed",
    "auto_paused",
    "auto_stopped",
    "auto_finished",
)


class Worker:
    """`ib worker` as a background process, killed or stopped by the test; its output goes to `worker.log`
    beside the repository (a pipe nobody reads fills, and then the worker stops in its next log line)."""

    def __init__(self, ib: IbRunner, rds: redis.Redis, keys: Keys) -> None:
        self.ib, self.rds, self.keys = ib, rds, keys
        self.proc: subprocess.Popen[bytes] | None = None
        self.log = ib.cwd.parent / "worker.log"

    def start(self) -> None:
        with self.log.open("ab") as out:
            self.proc = subprocess.Popen(
                [IB, "worker"], stdout=out, stderr=subprocess.STDOUT, env=self.ib.environ(), cwd=self.ib.cwd
            )
        worker = self.keys.worker(self.ib.env["IB_WORKER_ID"])
        retry_until(lambda: self.rds.exists(worker), 60, what="the worker")  # a deadline only

    def kill(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=10)
        self.proc = None

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait(timeout=20)
            self.proc = None


@pytest.fixture
def worker(agents_ib: IbRunner, rds: redis.Redis, keys: Keys) -> Iterator[Worker]:
    running = Worker(agents_ib, rds, keys)
    yield running
    running.stop()


def events(rds: redis.Redis, keys: Keys) -> list[dict[str, Any]]:
    entries = cast(list[tuple[str, dict[str, str]]], rds.xrange(keys.events))
    return [{**json.loads(f["e"]), "id": i} for i, f in entries]


def sequence(rds: redis.Redis, keys: Keys, project: str) -> list[tuple[str, str]]:
    """(type, task or agent) of the loop's events, in order, from its start."""
    found = [
        (e["type"], e["task"] or e["agent"] or "")
        for e in events(rds, keys)
        if e["type"] in SEQUENCE_TYPES and e["project"] == project
    ]
    return found[found.index(("auto_started", "")) :] if ("auto_started", "") in found else found


def add_task(ib: IbRunner, task_id: str, priority: int, project: str, *lines: str, after: str = "") -> None:
    extra = ("--after", after) if after else ()
    body = "\n".join(lines)
    done = ib.run(
        "task",
        "add",
        task_id,
        "--id",
        task_id,
        "--project",
        project,
        "--priority",
        str(priority),
        "--body",
        body,
        *extra,
    )
    assert done.returncode == 0, done.stderr


def follow_until_done(proc: subprocess.Popen[str]) -> list[dict[str, Any]]:
    out, err = proc.communicate(timeout=240)
    assert proc.returncode == 0, err
    return [json.loads(line) for line in out.splitlines() if line.startswith("{")]


@pytest.mark.timeout(300)
def test_seed_example_with_worktrees_a_conflict_and_a_restart(
    agents_ib: IbRunner, worker: Worker, repo: Path, tmp_path: Path, rds: redis.Redis, keys: Keys
) -> None:
    ib = agents_ib
    gate = tmp_path / "gate"
    gate.mkdir()
    add_task(
        ib,
        "design-auth",
        8,
        "backend",
        "Design the auth module.",
        "fake: write auth.txt auth: jwt with refresh tokens",
        "fake: commit design auth",
        'fake: run ib task done design-auth --summary "Implemented JWT auth with refresh tokens"',
        "fake: done",
    )
    add_task(
        ib,
        "impl-endpoints",
        7,
        "backend",
        "Add the REST endpoints.",
        "fake: write api.txt endpoints: login, token",
        "fake: commit add endpoints",
        f"fake: run ib log --quiet at-work && while [ ! -f {gate}/go ]; do sleep 0.1; done",
        "fake: done Added REST endpoints with validation",  # the Stop hook finishes the task
        after="design-auth",
    )
    add_task(
        ib,
        "write-tests",
        5,
        "backend",
        "Write the tests.",
        "fake: write tests.txt 47 tests, all passing",
        "fake: commit add tests",
        'fake: run ib task done write-tests --summary "Added 47 tests, all passing"',
        "fake: done",
        after="design-auth",
    )
    prompts = repo / ".ib" / "prompts"
    prompts.mkdir(parents=True)
    (prompts / "merge.md").write_text(
        "\n".join(
            [
                "fake: run git cherry-pick main..agent/impl-endpoints",
                "fake: write api.txt endpoints: login, token (owner: the person)",
                "fake: run git add -A && GIT_EDITOR=true git cherry-pick --continue",
                "fake: done Conflicts resolved",
            ]
        )
    )
    worker.start()
    follower = ib.popen("auto", "--project", "backend", "--worktrees", "--json")

    # impl-endpoints is at work: the person changes the same file on main, and the worker dies
    retry_until(lambda: reached(repo, "impl-endpoints", "at-work"), timeout=90, what="impl-endpoints at work")
    (repo / "api.txt").write_text("endpoints: owned by the person\n")
    git(repo, "add", "api.txt")
    git(repo, "commit", "-qm", "the person's endpoints")
    worker.kill()
    (gate / "go").touch()
    retry_until(
        lambda: ("task_done", "impl-endpoints") in sequence(rds, keys, "backend"),
        timeout=30,
        what="impl-endpoints done while the worker is down",
    )
    assert ("merge_ready", "impl-endpoints") not in sequence(rds, keys, "backend")
    worker.start()

    shown = follow_until_done(follower)
    assert sequence(rds, keys, "backend") == [
        ("auto_started", ""),
        ("task_claimed", "design-auth"),
        ("spawned", "design-auth"),
        ("task_done", "design-auth"),
        ("task_ready", "impl-endpoints"),
        ("task_ready", "write-tests"),
        ("merge_ready", "design-auth"),
        ("merge_merged", "design-auth"),
        ("task_claimed", "impl-endpoints"),
        ("spawned", "impl-endpoints"),
        ("task_done", "impl-endpoints"),
        ("merge_ready", "impl-endpoints"),
        ("merge_conflict", "impl-endpoints"),
        ("spawned", "merge-impl-endpoints"),
        ("merge_ready", "impl-endpoints"),
        ("merge_merged", "impl-endpoints"),
        ("task_claimed", "write-tests"),
        ("spawned", "write-tests"),
        ("task_done", "write-tests"),
        ("merge_ready", "write-tests"),
        ("merge_merged", "write-tests"),
        ("auto_finished", ""),
    ]
    everything = events(rds, keys)
    started = next(e for e in everything if e["type"] == "auto_started")
    assert (
        started["msg"]
        == "Auto mode started for project backend (a worktree per task)\n1 task ready, 2 blocked"
    )
    finished = next(e for e in everything if e["type"] == "auto_finished")
    assert finished["msg"] == "Queue empty. Auto mode finished. 3/3 tasks done."
    conflict = next(e for e in everything if e["type"] == "merge_conflict")
    assert (conflict["agent"], conflict["data"]["files"]) == ("impl-endpoints", ["api.txt"])
    merged = [e for e in everything if e["type"] == "merge_merged"]
    assert [e["agent"] for e in merged] == ["design-auth", "merge-impl-endpoints", "write-tests"]
    assert merged[-1]["data"]["sha"] == git(repo, "rev-parse", "main").strip()
    done = [e for e in everything if e["type"] == "task_done"]
    assert [e["data"]["summary"] for e in done] == [
        "Implemented JWT auth with refresh tokens",
        "Added REST endpoints with validation",
        "Added 47 tests, all passing",
    ]
    # the merge agent finished before its merge was queued; the task's own agent went after the merge
    types = [(e["type"], e["agent"]) for e in everything]
    resolved = types.index(("complete", "merge-impl-endpoints"))
    assert resolved < types.index(("merge_ready", "merge-impl-endpoints"))
    assert types.index(("merge_merged", "merge-impl-endpoints")) < types.index(("killed", "impl-endpoints"))
    # what `ib auto` showed is the project's events up to the end
    assert shown[0]["type"] == "auto_started" and shown[-1]["type"] == "auto_finished"
    ids = [e["id"] for e in everything if e["project"] == "backend"]
    assert [e["id"] for e in shown] == ids[ids.index(shown[0]["id"]) : ids.index(shown[-1]["id"]) + 1]

    assert (repo / "auth.txt").read_text() == "auth: jwt with refresh tokens\n"
    assert (repo / "api.txt").read_text() == "endpoints: login, token (owner: the person)\n"
    assert (repo / "tests.txt").read_text() == "47 tests, all passing\n"
    assert git(repo, "status", "--porcelain").strip() == ""
    assert not git(repo, "branch", "--list", "agent/*").strip()
    assert json.loads(ib.run("list", "--json").stdout) == []
    status = json.loads(ib.run("auto", "status", "--project", "backend", "--json").stdout)
    assert [(s["status"], s["done"]) for s in status] == [
        ("finished", ["design-auth", "impl-endpoints", "write-tests"])
    ]
    tasks = json.loads(ib.run("task", "list", "--project", "backend", "--json").stdout)
    assert {t["id"]: t["status"] for t in tasks} == dict.fromkeys(
        ("design-auth", "impl-endpoints", "write-tests"), "done"
    )


@pytest.mark.timeout(200)
def test_without_worktrees_the_projects_agent_gets_each_task_then_stop(
    agents_ib: IbRunner, worker: Worker, repo: Path, rds: redis.Redis, keys: Keys
) -> None:
    ib = agents_ib
    add_task(ib, "first", 6, "solo", "The first thing.", "fake: say on it", "fake: done Did the first thing")
    add_task(ib, "second", 4, "solo", "The second thing.", "fake: wait Need a hand")
    add_task(ib, "third", 2, "solo", "The third thing.", "fake: done", after="second")
    worker.start()
    started = ib.run("auto", "--project", "solo", "--detach")
    assert started.returncode == 0, started.stderr
    assert "auto mode running for solo" in started.stdout

    def given_second() -> bool:
        rows = json.loads(ib.run("list", "--json").stdout)
        return any(r["id"] == "auto-solo" and r["task"] == "second" for r in rows)

    retry_until(given_second, timeout=60, what="the second task sent to the project's agent")
    again = ib.run("auto", "--project", "solo")
    assert again.returncode == 1 and "already runs for solo" in again.stderr
    status = ib.run("auto", "status", "--project", "solo")
    assert "solo: running, working (agent auto-solo" in status.stdout and "task second" in status.stdout

    held = ib.run("auto", "pause", "--project", "solo", "--interrupt")
    assert held.returncode == 0, held.stderr
    assert "paused" in ib.run("auto", "status", "--project", "solo").stdout
    resumed = ib.run("auto", "--project", "solo", "--detach")
    assert resumed.returncode == 0, resumed.stderr
    assert "auto mode running for solo" in resumed.stdout  # the agent still holds `second`: nothing to redo

    stopped = ib.run("auto", "stop", "--project", "solo")
    assert stopped.returncode == 0, stopped.stderr
    assert stopped.stdout.strip() == "auto mode stopped for solo; second stays claimed"
    assert sequence(rds, keys, "solo") == [
        ("auto_started", ""),
        ("task_claimed", "first"),
        ("spawned", "first"),
        ("task_done", "first"),
        ("task_claimed", "second"),
        ("auto_paused", "second"),
        ("auto_started", "second"),
        ("auto_stopped", "second"),
    ]
    tasks = {t["id"]: t for t in json.loads(ib.run("task", "list", "--project", "solo", "--json").stdout)}
    assert (tasks["second"]["status"], tasks["second"]["claimed_by"]) == ("claimed", "auto-solo")
    agents = json.loads(ib.run("list", "--json").stdout)
    assert [(a["id"], a["worktree"]) for a in agents] == [("auto-solo", "")]
    again_status = json.loads(ib.run("auto", "status", "--json").stdout)
    assert [(s["project"], s["status"], s["done"]) for s in again_status] == [("solo", "stopped", ["first"])]
    assert ib.run("auto", "stop", "--project", "solo").returncode == 1


def test_steps_cut_short_by_a_kill_are_done_once(agents_ib: IbRunner, rds: redis.Redis, keys: Keys) -> None:
    ib = agents_ib
    add_task(ib, "lone", 5, "cut", "Alone.", "fake: wait")
    store = AutoStore(rds, keys)
    # the worker claimed `lone` for its agent and was killed before it saved that it had
    TaskStore(rds, keys, 10_000).claim("cut", "lone")
    claiming = AutoState(project="cut", worker=ib.env["IB_WORKER_ID"], worktrees=True, phase="claiming")
    store.save(claiming, [action_to_dict(Claim("lone"))])
    for _ in range(2):
        assert ib.run("worker", "--once").returncode == 0
    state = store.get("cut")
    assert state is not None and (state.phase, state.task, state.task_agent) == ("working", "lone", "lone")
    # then killed again after spawning the agent, before taking the step off its outbox
    store.save(state, [action_to_dict(GiveTask("lone", "lone", worktree=True))])
    assert ib.run("worker", "--once").returncode == 0
    loop = [x for x in sequence(rds, keys, "cut") if x[0] in ("task_claimed", "spawned")]
    assert loop == [("task_claimed", "lone"), ("spawned", "lone")]
    assert [a["id"] for a in json.loads(ib.run("list", "--json").stdout)] == ["lone"]
    found = store.load("cut")
    assert found is not None and found[1] == []
    stopped = ib.run("auto", "stop", "--project", "cut")  # no worker runs now: the state is changed directly
    assert stopped.returncode == 0, stopped.stderr
    assert sequence(rds, keys, "cut")[-1] == ("auto_stopped", "lone")
    after = store.get("cut")
    assert after is not None and (after.status, after.task) == ("stopped", "lone")


@pytest.mark.timeout(200)
def test_a_failed_merge_pauses_and_resuming_merges_again(
    agents_ib: IbRunner, worker: Worker, repo: Path, rds: redis.Redis, keys: Keys
) -> None:
    ib = agents_ib
    add_task(
        ib,
        "messy",
        5,
        "mess",
        "Leave a mess.",
        "fake: write m.txt first",
        "fake: commit first",
        "fake: write m.txt second, not committed",
        'fake: run ib task done messy --summary "left a mess"',
        "fake: wait",
    )
    worker.start()
    paused = ib.run("auto", "--project", "mess", "--worktrees", "--json", timeout=120)
    assert paused.returncode == 1
    assert "auto mode paused for mess: merging messy failed" in paused.stderr
    assert "uncommitted changes" in paused.stderr
    assert [t for t, _x in sequence(rds, keys, "mess")][-3:] == ["merge_ready", "merge_failed", "auto_paused"]
    assert "paused" in ib.run("auto", "status", "--project", "mess").stdout

    git(repo / ".ib" / "agents" / "messy" / "repo", "commit", "-qam", "the person commits the rest")
    resumed = ib.run("auto", "--project", "mess", "--json", timeout=120)
    assert resumed.returncode == 0, resumed.stderr
    lines = [json.loads(line) for line in resumed.stdout.splitlines()]
    assert lines[0]["type"] == "auto_started" and lines[0]["data"] == {"resumed": True}
    assert lines[-1]["msg"] == "Queue empty. Auto mode finished. 1/1 tasks done."
    assert sequence(rds, keys, "mess")[-4:] == [
        ("auto_started", "messy"),
        ("merge_ready", "messy"),
        ("merge_merged", "messy"),
        ("auto_finished", ""),
    ]
    assert (repo / "m.txt").read_text() == "second, not committed\n"
