"""The merge queue against real git, tmux, Redis and the worker: FIFO per project, conflicts that leave the
repository clean, failures, requests of another worker's agents, and a merge cut short by a restart."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, cast

import redis

from bus.commands.worker_commands import QueueMerge
from bus.commands.worker_rpc import submit
from bus.tasks.merges import MergeStore
from bus.wire.keys import Keys
from tests.cli import IbRunner, git
from tests.waiting import retry_until

MERGE_TYPES = ("merge_ready", "merge_merged", "merge_conflict", "merge_failed")


def spawn(ib: IbRunner, name: str, *lines: str) -> None:
    done = ib.run("new-agent", "\n".join([f"Work as {name}.", *lines]), "--name", name, "--project", "shop")
    assert done.returncode == 0, done.stderr


def wait_complete(ib: IbRunner, *names: str) -> None:
    def ready() -> bool:
        ib.run("worker", "--once")
        states = {r["id"]: r["state"] for r in json.loads(ib.run("list", "--json").stdout)}
        return all(states.get(n) == "complete" for n in names)

    retry_until(ready, timeout=40, interval=0.3, what=f"{names} to complete")


def merge_events(rds: redis.Redis, keys: Keys) -> list[dict[str, Any]]:
    entries = cast(list[tuple[str, dict[str, str]]], rds.xrange(keys.events))
    found = [json.loads(f["e"]) for _i, f in entries]
    return [e for e in found if e["type"] in MERGE_TYPES]


def queue(ib: IbRunner, rds: redis.Redis, keys: Keys, *agents: str) -> None:
    for agent in agents:
        submit(rds, keys, ib.env["IB_WORKER_ID"], QueueMerge(agent=agent))


def agents(ib: IbRunner) -> list[str]:
    return [r["id"] for r in json.loads(ib.run("list", "--json").stdout)]


def test_two_merges_in_order(agents_ib: IbRunner, repo: Path, rds: redis.Redis, keys: Keys) -> None:
    ib = agents_ib
    spawn(ib, "first", "fake: write a.txt from first", "fake: commit add a", "fake: done")
    spawn(ib, "second", "fake: write b.txt from second", "fake: commit add b", "fake: done")
    wait_complete(ib, "first", "second")
    queue(ib, rds, keys, "first", "second", "first")  # the repeat is the request already queued
    assert ib.run("worker", "--once").returncode == 0
    got = [(e["type"], e["agent"]) for e in merge_events(rds, keys)]
    assert got == [
        ("merge_ready", "first"),
        ("merge_ready", "second"),
        ("merge_merged", "first"),
        ("merge_merged", "second"),
    ]
    merged = [e for e in merge_events(rds, keys) if e["type"] == "merge_merged"]
    assert merged[-1]["data"]["sha"] == git(repo, "rev-parse", "main").strip()
    assert merged[0]["project"] == "shop" and merged[0]["data"]["branch"] == "agent/first"
    assert (merged[0]["data"]["target"], merged[0]["data"]["commits"]) == ("main", 1)
    assert (repo / "a.txt").read_text() == "from first\n" and (repo / "b.txt").read_text() == "from second\n"
    assert git(repo, "status", "--porcelain").strip() == ""
    assert not git(repo, "branch", "--list", "agent/*").strip()
    assert agents(ib) == []
    assert not (repo / ".ib" / "agents" / "first").exists()
    assert rds.llen(keys.merge_queue("shop")) == 0


def test_conflict_leaves_repo_clean_and_agent_alive(
    agents_ib: IbRunner, repo: Path, rds: redis.Redis, keys: Keys
) -> None:
    ib = agents_ib
    spawn(ib, "clash", "fake: write README.md from the agent", "fake: commit agent edit", "fake: done")
    wait_complete(ib, "clash")
    (repo / "README.md").write_text("from the person\n")
    git(repo, "commit", "-qam", "person edit")
    before = git(repo, "rev-parse", "main").strip()
    queue(ib, rds, keys, "clash")
    assert ib.run("worker", "--once").returncode == 0
    last = merge_events(rds, keys)[-1]
    assert (last["type"], last["agent"], last["data"]["files"]) == ("merge_conflict", "clash", ["README.md"])
    assert "README.md" in last["msg"]
    assert git(repo, "status", "--porcelain").strip() == ""
    assert git(repo, "rev-parse", "main").strip() == before
    assert agents(ib) == ["clash"]
    assert git(repo, "branch", "--list", "agent/clash").strip()
    assert rds.llen(keys.merge_queue("shop")) == 0
    assert MergeStore(rds, keys, 1000).get(last["data"]["merge"]).status == "conflict"


def test_uncommitted_work_fails_the_merge(
    agents_ib: IbRunner, repo: Path, rds: redis.Redis, keys: Keys
) -> None:
    ib = agents_ib
    spawn(
        ib,
        "sloppy",
        "fake: write c.txt committed",
        "fake: commit add c",
        "fake: write d.txt loose",
        "fake: done",
    )
    wait_complete(ib, "sloppy")
    (repo / ".ib" / "agents" / "sloppy" / "repo" / "c.txt").write_text("changed, not committed\n")
    queue(ib, rds, keys, "sloppy")
    assert ib.run("worker", "--once").returncode == 0
    last = merge_events(rds, keys)[-1]
    assert last["type"] == "merge_failed" and "uncommitted changes" in last["data"]["error"]
    assert agents(ib) == ["sloppy"]
    assert not (repo / "c.txt").exists()


def test_another_workers_request_at_the_head_goes_first(
    agents_ib: IbRunner, repo: Path, rds: redis.Redis, keys: Keys
) -> None:
    ib = agents_ib
    spawn(ib, "theirs", "fake: write t.txt theirs", "fake: commit theirs", "fake: done")
    spawn(ib, "ours", "fake: write o.txt ours", "fake: commit ours", "fake: done")
    wait_complete(ib, "theirs", "ours")
    rds.hset(keys.agent("theirs"), "worker", "elsewhere")  # as if another machine ran it
    queue(ib, rds, keys, "theirs", "ours")
    assert ib.run("worker", "--once").returncode == 0
    assert [e["type"] for e in merge_events(rds, keys)] == ["merge_ready", "merge_ready"]
    assert rds.llen(keys.merge_queue("shop")) == 2

    elsewhere = ib.run("worker", "--once", env={"IB_WORKER_ID": "elsewhere"})
    assert elsewhere.returncode == 0, elsewhere.stderr
    assert [(e["type"], e["agent"]) for e in merge_events(rds, keys)][2:] == [("merge_merged", "theirs")]
    assert ib.run("worker", "--once").returncode == 0  # woken by their merge_merged
    assert [(e["type"], e["agent"]) for e in merge_events(rds, keys)][3:] == [("merge_merged", "ours")]
    assert (repo / "t.txt").exists() and (repo / "o.txt").exists()


def test_a_merge_cut_short_by_a_restart_finishes(
    agents_ib: IbRunner, repo: Path, rds: redis.Redis, keys: Keys
) -> None:
    ib = agents_ib
    spawn(ib, "halfway", "fake: write h.txt halfway", "fake: commit halfway", "fake: done")
    wait_complete(ib, "halfway")
    store = MergeStore(rds, keys, 1000)
    req = store.enqueue(
        project="shop", agent="halfway", branch="agent/halfway", target="main", worker=ib.env["IB_WORKER_ID"]
    )
    assert ib.run("diff", "halfway").returncode == 0  # brings the branch from the agent's own repository
    git(repo, "merge", "--no-ff", "-q", "-m", "merged before the crash", "agent/halfway")
    sha = git(repo, "rev-parse", "main").strip()
    store.mark(req, status="merged", sha=sha, commits=1)  # the worker died before tearing the agent down
    assert ib.run("worker", "--once").returncode == 0
    last = merge_events(rds, keys)[-1]
    assert (last["type"], last["data"]["sha"]) == ("merge_merged", sha)
    assert agents(ib) == []
    assert not git(repo, "branch", "--list", "agent/halfway").strip()
    assert [e["type"] for e in merge_events(rds, keys)].count("merge_merged") == 1


def test_a_request_for_a_vanished_agent_fails(agents_ib: IbRunner, rds: redis.Redis, keys: Keys) -> None:
    ib = agents_ib
    store = MergeStore(rds, keys, 1000)
    store.enqueue(
        project="shop", agent="ghost", branch="agent/ghost", target="main", worker=ib.env["IB_WORKER_ID"]
    )
    assert ib.run("worker", "--once").returncode == 0
    last = merge_events(rds, keys)[-1]
    assert last["type"] == "merge_failed" and "ghost is gone" in last["data"]["error"]
    assert last["msg"].startswith("Merge of agent/ghost → main failed")


def test_queue_merge_refuses_an_agent_without_a_branch(
    agents_ib: IbRunner, rds: redis.Redis, keys: Keys
) -> None:
    ib = agents_ib
    done = ib.run("new-agent", "stay home\nfake: wait", "--name", "home", "--no-worktree")
    assert done.returncode == 0, done.stderr
    command = submit(rds, keys, ib.env["IB_WORKER_ID"], QueueMerge(agent="home"))
    assert ib.run("worker", "--once").returncode == 0
    answer = json.loads(str(rds.lpop(keys.reply(command))))
    assert answer["ok"] is False and "no branch to merge" in answer["error"]
    assert merge_events(rds, keys) == []


def test_the_smaller_of_two_overlapping_changes_merges_first_and_says_why(
    agents_ib: IbRunner, repo: Path, rds: redis.Redis, keys: Keys
) -> None:
    ib = agents_ib
    spawn(
        ib,
        "big",
        "fake: run seq 1 60 > calc.py",
        "fake: write big.txt more",
        "fake: commit big",
        "fake: done",
    )
    spawn(ib, "small", "fake: write calc.py x = 1", "fake: commit small", "fake: done")
    spawn(ib, "aside", "fake: write aside.txt unrelated", "fake: commit aside", "fake: done")
    wait_complete(ib, "big", "small", "aside")
    here = ib.env["IB_WORKER_ID"]
    for name in ("big", "small", "aside"):  # queued while their worker is away, so they wait together
        rds.hset(keys.agent(name), "worker", "away")
    queue(ib, rds, keys, "big", "small", "aside")
    assert ib.run("worker", "--once").returncode == 0
    ready = [e for e in merge_events(rds, keys) if e["type"] == "merge_ready"]
    assert [(e["agent"], e["data"]["position"], e["data"]["size"]) for e in ready] == [
        ("big", 1, 61),
        ("small", 1, 1),
        ("aside", 3, 1),  # it overlaps nothing: it keeps its turn after big
    ]
    why = f"before merge {ready[0]['data']['merge']} (big, 61 changed lines, both change calc.py)"
    assert ready[1]["data"]["order"] == why + ": the smaller change goes first (1 changed line)"
    assert why in ready[1]["msg"] and "order" not in ready[2]["data"]

    listed = ib.run("merge-queue", "--project", "shop")
    assert listed.returncode == 0, listed.stderr
    lines = listed.stdout.splitlines()
    assert [line.split()[:4] for line in lines[1:] if line.lstrip()[:1].isdigit()] == [
        ["1.", "merge", ready[1]["data"]["merge"], "small"],
        ["2.", "merge", ready[0]["data"]["merge"], "big"],
        ["3.", "merge", ready[2]["data"]["merge"], "aside"],
    ]
    assert lines[2].strip() == ready[1]["data"]["order"]

    for name in ("big", "small", "aside"):
        rds.hset(keys.agent(name), "worker", here)
        rds.hset(keys.merge(next(e["data"]["merge"] for e in ready if e["agent"] == name)), "worker", here)
    assert ib.run("worker", "--once").returncode == 0  # a starting worker runs the queues it owns
    results = [(e["type"], e["agent"]) for e in merge_events(rds, keys)][3:]
    assert results == [("merge_merged", "small"), ("merge_conflict", "big"), ("merge_merged", "aside")]
    assert (repo / "calc.py").read_text() == "x = 1\n"
    assert ib.run("merge-queue").stdout == "every merge queue is empty\n"
