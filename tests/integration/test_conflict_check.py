"""Conflict prediction with real git and a real Redis: agents' own repositories made as ittybus makes them,
scripted edits (committed and not), the worker's check, its `conflict_risk` events, the once-per-overlap marks
and the note the agent's next PostToolUse hook prints. Every prediction is compared with what a real
`git merge` of the same two states does: 0 false positives and 0 false negatives on the scripted set."""

from __future__ import annotations

import json
import os
import subprocess
import threading
from pathlib import Path

import pytest
import redis

from bus.connection.clients import client_for
from bus.wire.keys import Keys
from tests.cli import IB, git
from tests.conflict_pairs import (
    EXPECTED,
    PAIRS,
    WORKER,
    agent_repo_of,
    base_repo,
    commit,
    edit,
    real_merge_conflicts,
    runtime,
)
from tests.streams import stream_entries
from tests.waiting import retry_until
from worker.agents.layout import AgentPaths
from worker.conflicts.check import PRUNE_EVERY, STALE, ConflictCheck
from worker.conflicts.watch import ConflictWatch
from worker.hooks import changes


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return base_repo(tmp_path / "repo")


@pytest.mark.parametrize("case", PAIRS, ids=PAIRS.keys())
def test_prediction_matches_the_real_merge(
    case: str, repo: Path, redis_url: str, namespace: str, rds: redis.Redis, keys: Keys, tmp_path: Path
) -> None:
    rt = runtime(repo, redis_url, namespace)
    a, b = agent_repo_of(rt, repo, "ann"), agent_repo_of(rt, repo, "bob")
    edit_a, edit_b = PAIRS[case]
    edit_a(a)
    edit_b(b)
    status_before = git(b, "status", "--porcelain")  # (git status refreshes the index: read it after)
    index_before = (AgentPaths(repo, "bob").git_dir / "index").read_bytes()

    told = ConflictCheck(rt).run(["bob"])

    predicted = sorted(f.shown for c in told if c.against == "agent" for f in c.files)
    assert predicted == EXPECTED.get(case, [])
    assert (AgentPaths(repo, "bob").git_dir / "index").read_bytes() == index_before  # never touched
    assert git(b, "status", "--porcelain") == status_before
    assert sorted(real_merge_conflicts(a, b, tmp_path / "truth")) == predicted


def _events(rds: redis.Redis, keys: Keys) -> list[dict[str, object]]:
    entries = stream_entries(rds, keys.events)
    return [e for _i, f in entries if (e := json.loads(f["e"]))["type"] == "conflict_risk"]


def test_an_overlap_is_told_once_until_it_changes_and_again_after_it_went(
    repo: Path, redis_url: str, namespace: str, rds: redis.Redis, keys: Keys
) -> None:
    rt = runtime(repo, redis_url, namespace)
    a, b = agent_repo_of(rt, repo, "ann"), agent_repo_of(rt, repo, "bob")
    check = ConflictCheck(rt)
    edit(a / "calc.py", "return a + b", "return a + b + 1")
    assert check.run(["ann"]) == []  # bob has not changed anything yet
    edit(b / "calc.py", "return a + b", "return a - b")
    check.run(["bob"])
    (event,) = _events(rds, keys)
    assert event["agent"] == "bob"
    data = event["data"]
    assert isinstance(data, dict)
    assert data["agents"] == ["bob", "ann"]
    assert data["files"] == ["calc.py"]
    assert data["conflicts"][0]["hunks"][0]["ours"] == ["    return a - b"]
    assert data["conflicts"][0]["hunks"][0]["theirs"] == ["    return a + b + 1"]

    check.run(["ann"])  # the same overlap seen from ann's side: not told again
    check.run(["bob"])
    assert len(_events(rds, keys)) == 1

    edit(b / "calc.py", "return a - b", "return a - b - 1")  # the overlap changes: told again
    check.run(["bob"])
    assert len(_events(rds, keys)) == 2

    edit(b / "calc.py", "return a - b - 1", "return a + b")  # bob backs off: the mark goes
    check.run(["bob"])
    assert rds.hgetall(keys.conflict_marks("ann", "bob")) == {}
    edit(b / "calc.py", "return a + b", "return a - b")  # and a new overlap is told
    check.run(["bob"])
    assert len(_events(rds, keys)) == 3


def test_the_target_branch_counts_as_a_side(
    repo: Path, redis_url: str, namespace: str, rds: redis.Redis, keys: Keys
) -> None:
    rt = runtime(repo, redis_url, namespace)
    b = agent_repo_of(rt, repo, "bob")
    edit(repo / "calc.py", "return a * b", "return a * b * 1")
    commit(repo)
    edit(b / "calc.py", "return a * b", "return b * a")
    (collision,) = ConflictCheck(rt).run(["bob"])
    assert (collision.against, collision.other) == ("branch", "main")
    (event,) = _events(rds, keys)
    data = event["data"]
    assert isinstance(data, dict) and data["branch"] == "main"


def test_a_rebase_under_way_is_skipped_not_misread(
    repo: Path, redis_url: str, namespace: str, rds: redis.Redis, keys: Keys
) -> None:
    rt = runtime(repo, redis_url, namespace)
    a, b = agent_repo_of(rt, repo, "ann"), agent_repo_of(rt, repo, "bob")
    edit(a / "calc.py", "return a + b", "return 1")
    edit(b / "calc.py", "return a + b", "return 2")
    (AgentPaths(repo, "bob").git_dir / "rebase-merge").mkdir()
    assert ConflictCheck(rt).run(["bob"]) == []
    (AgentPaths(repo, "bob").git_dir / "rebase-merge").rmdir()
    assert len(ConflictCheck(rt).run(["bob"])) == 1


def test_the_hook_asks_the_worker_and_hands_the_note_to_the_agent_once(
    repo: Path, redis_url: str, namespace: str, rds: redis.Redis, keys: Keys
) -> None:
    """The path a real agent takes: its PostToolUse hook enqueues, the worker's watch checks, the agent's next
    hook prints the note as Claude Code's additionalContext; the note is read once."""
    rt = runtime(repo, redis_url, namespace)
    a, b = agent_repo_of(rt, repo, "ann"), agent_repo_of(rt, repo, "bob")
    edit(a / "calc.py", "return a + b", "return 1")
    edit(b / "calc.py", "return a + b", "return 2")
    env = {"IB_AGENT_ID": "bob", "IB_WORKER_ID": WORKER, "IB_REDIS_URL": redis_url, "IB_NAMESPACE": namespace}
    env["IB_ROOT"] = str(repo)
    payload = json.dumps({"hook_event_name": "PostToolUse", "tool_name": "Edit", "tool_input": {}})
    assert changes.run(payload, env) is None  # nothing told yet; the check is asked for
    assert rds.xlen(keys.conflict_checks(WORKER)) == 1

    watch = ConflictWatch(rt, client_for(redis_url, blocking=True), threading.Event())
    assert watch.drain() == 1
    assert len(_events(rds, keys)) == 1

    read = json.dumps({"hook_event_name": "PostToolUse", "tool_name": "Bash", "tool_input": {}})
    out = changes.run(read, env)
    assert out is not None
    context = json.loads(out)["hookSpecificOutput"]
    assert context["hookEventName"] == "PostToolUse"
    assert "agent ann" in context["additionalContext"]
    assert "calc.py" in context["additionalContext"]
    assert changes.run(read, env) is None  # once


BAD_STDIN = {"empty": "", "not-json": "{nope", "a-list": "[1]", "no-tool": "{}"}


@pytest.mark.parametrize("stdin", BAD_STDIN.values(), ids=BAD_STDIN.keys())
def test_the_hook_ignores_what_is_not_a_tool_call(stdin: str, redis_url: str, namespace: str) -> None:
    env = {"IB_AGENT_ID": "bob", "IB_WORKER_ID": WORKER, "IB_REDIS_URL": redis_url, "IB_NAMESPACE": namespace}
    assert changes.run(stdin, env) is None


def test_the_hook_says_nothing_and_exits_0_when_redis_is_away(tmp_path: Path) -> None:
    env = {
        "IB_AGENT_ID": "bob",
        "IB_WORKER_ID": WORKER,
        "IB_REDIS_URL": "redis://127.0.0.1:1/0",
        "IB_SPOOL_DIR": str(tmp_path),
        "PATH": "/usr/bin:/bin",
    }
    done = subprocess.run(
        [IB, "hook", "changes"],
        input='{"tool_name": "Edit"}',
        env=env,
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp_path,
    )
    assert (done.returncode, done.stdout) == (0, "")


def test_two_agents_editing_the_same_line_in_the_same_second_get_one_event(
    repo: Path, redis_url: str, namespace: str, rds: redis.Redis, keys: Keys
) -> None:
    """Both hooks ask before the worker looks: one batch, both snapshots taken first, one event (told to the
    agent whose request came second), nothing told twice."""
    rt = runtime(repo, redis_url, namespace)
    a, b = agent_repo_of(rt, repo, "ann"), agent_repo_of(rt, repo, "bob")
    edit(a / "calc.py", "return a + b", "return 1")
    edit(b / "calc.py", "return a + b", "return 2")
    for agent in ("ann", "bob"):
        env = {
            "IB_AGENT_ID": agent,
            "IB_WORKER_ID": WORKER,
            "IB_REDIS_URL": redis_url,
            "IB_NAMESPACE": namespace,
        }
        changes.run(json.dumps({"tool_name": "Write", "tool_input": {}}), env)
    watch = ConflictWatch(rt, client_for(redis_url, blocking=True), threading.Event())
    assert watch.drain() == 2
    (event,) = _events(rds, keys)
    data = event["data"]
    assert isinstance(data, dict) and data["agents"] == ["bob", "ann"]
    assert rds.llen(keys.conflict_notes("bob")) == 1
    assert rds.llen(keys.conflict_notes("ann")) == 0


def test_a_same_size_rewrite_in_the_second_of_the_index_is_seen(
    repo: Path, redis_url: str, namespace: str, rds: redis.Redis, keys: Keys
) -> None:
    """Racy git: a file rewritten with the same size in the second its index was written has the stat the
    index recorded; only the index's own date tells git to read it. The snapshot's copy of the index keeps
    that date."""
    rt = runtime(repo, redis_url, namespace)
    a, b = agent_repo_of(rt, repo, "ann"), agent_repo_of(rt, repo, "bob")
    (a / "logo.bin").write_bytes(b"\x00\x01\x02aaaa")
    index = AgentPaths(repo, "bob").git_dir / "index"
    stamp = index.stat().st_mtime_ns
    (b / "logo.bin").write_bytes(b"\x00\x01\x02bbbb")  # the size of the committed file
    os.utime(b / "logo.bin", ns=(stamp, stamp))
    os.utime(index, ns=(stamp, stamp))
    (collision,) = ConflictCheck(rt).run(["bob"])
    assert [f.shown for f in collision.files] == ["logo.bin"]


def test_a_change_made_outside_the_tools_is_seen_once_the_idle_watch_refreshes_it(
    repo: Path, redis_url: str, namespace: str, rds: redis.Redis, keys: Keys
) -> None:
    """A check uses the other agents' last snapshots (their own edits refresh them); one changed behind the
    tools' back (a person's edit) is taken again when the watch is idle and its snapshot is stale."""
    rt = runtime(repo, redis_url, namespace)
    a, b = agent_repo_of(rt, repo, "ann"), agent_repo_of(rt, repo, "bob")
    check = ConflictCheck(rt)
    check.run(["ann", "bob"])
    assert check.refresh_stalest() is False  # nothing stale yet
    edit(a / "calc.py", "return a + b", "return 1")  # no hook ran for this one
    edit(b / "calc.py", "return a + b", "return 2")
    assert check.run(["bob"]) == []  # ann's snapshot is the old one
    for side in check.snapshots.values():
        side.taken -= STALE
    assert check.refresh_stalest() is True
    assert check.refresh_stalest() is True
    assert len(check.run(["bob"])) == 1


def test_pruning_the_scratch_repository_keeps_the_check_working(
    repo: Path, redis_url: str, namespace: str, rds: redis.Redis, keys: Keys
) -> None:
    rt = runtime(repo, redis_url, namespace)
    a, b = agent_repo_of(rt, repo, "ann"), agent_repo_of(rt, repo, "bob")
    check = ConflictCheck(rt)
    edit(a / "calc.py", "return a + b", "return 1")
    edit(b / "calc.py", "return a + b", "return 2")
    assert len(check.run(["bob"])) == 1
    assert check.prune() is False  # not yet time
    check.pruned -= PRUNE_EVERY
    assert check.prune() is True
    for scratch in check.scratches.values():  # even what is in use now: snapshots are taken again
        scratch.prune("now")
    check.snapshots.clear()
    edit(b / "calc.py", "return 2", "return 3")
    assert len(check.run(["ann", "bob"])) == 1


def test_the_watch_thread_checks_what_the_hook_asks_and_outlives_a_lost_stream(
    repo: Path, redis_url: str, namespace: str, rds: redis.Redis, keys: Keys
) -> None:
    """The worker's thread, as `ib worker` runs it: a request is checked without a drain; a Redis that lost
    the stream and its group (a restart without its data) costs nothing but the time to make them again."""
    rt = runtime(repo, redis_url, namespace)
    a, b = agent_repo_of(rt, repo, "ann"), agent_repo_of(rt, repo, "bob")
    stopping = threading.Event()
    watch = ConflictWatch(rt, client_for(redis_url, blocking=True), stopping)
    watch.start()
    try:
        env = {
            "IB_AGENT_ID": "bob",
            "IB_WORKER_ID": WORKER,
            "IB_REDIS_URL": redis_url,
            "IB_NAMESPACE": namespace,
        }
        retry_until(lambda: rds.exists(keys.conflict_checks(WORKER)), 10, 0.05, "the watch's group")
        rds.delete(keys.conflict_checks(WORKER))
        edit(a / "calc.py", "return a + b", "return 1")
        edit(b / "calc.py", "return a + b", "return 2")
        changes.run(json.dumps({"tool_name": "Edit", "tool_input": {}}), env)
        retry_until(lambda: _events(rds, keys), 30, 0.05, "the conflict_risk event")
    finally:
        stopping.set()
        assert watch.thread is not None
        watch.thread.join(10)
    assert not watch.thread.is_alive()


def test_a_file_named_with_control_characters_is_told_in_escapes(
    repo: Path, redis_url: str, namespace: str, rds: redis.Redis, keys: Keys
) -> None:
    rt = runtime(repo, redis_url, namespace)
    a, b = agent_repo_of(rt, repo, "ann"), agent_repo_of(rt, repo, "bob")
    (a / "bell\x07tab\t.py").write_text("A = 1\n")
    (b / "bell\x07tab\t.py").write_text("A = 2\n")
    (collision,) = ConflictCheck(rt).run(["bob"])
    assert [f.shown for f in collision.files] == ["bell\\x07tab\\t.py"]
    (event,) = _events(rds, keys)
    assert "bell\\x07tab\\t.py" in str(event["msg"]) and "\x07" not in str(event["msg"])
    note = str(rds.lindex(keys.conflict_notes("bob"), 0))
    assert "bell\\x07tab\\t.py" in note and "\x07" not in note


def test_a_branch_rebased_under_the_check_is_compared_as_it_is_now(
    repo: Path, redis_url: str, namespace: str, rds: redis.Redis, keys: Keys
) -> None:
    """bob's branch is rewritten (rebased onto main, which took ann's line, keeping main's side): its old
    snapshot's history is gone; the next check compares the new branch, finds no conflict, and forgets the
    overlap, so a new one would be told again."""
    rt = runtime(repo, redis_url, namespace)
    a, b = agent_repo_of(rt, repo, "ann"), agent_repo_of(rt, repo, "bob")
    check = ConflictCheck(rt)
    edit(a / "calc.py", "return a + b", "return 1")
    commit(a)
    edit(b / "calc.py", "return a + b", "return 2")
    commit(b)
    assert len(check.run(["bob"])) == 1

    edit(repo / "calc.py", "return a + b", "return 1")
    commit(repo)
    git(b, "fetch", "-q", str(repo), "main")
    git(b, "rebase", "-q", "-X", "ours", "FETCH_HEAD")
    assert "return 1" in (b / "calc.py").read_text()
    assert check.run(["bob"]) == []
    assert rds.hlen(keys.conflict_marks("ann", "bob")) == 0

    edit(b / "calc.py", "return 1", "return 3")
    (again,) = check.run(["bob"])
    assert [f.shown for f in again.files] == ["calc.py"]
