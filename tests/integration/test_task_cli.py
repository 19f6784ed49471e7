"""`ib task ...` run for real: every command, every refusal with its one line and exit code, `claim --wait`
woken across processes, tests before `done`, and the Stop hook finishing a fake agent's task."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any, cast

import pytest
import redis

from bus.tasks.task_store import TaskStore
from bus.wire.keys import Keys
from tests.cli import IbRunner
from tests.waiting import retry_until

NOTHING_READY = 3
P = "repo"  # the project of the `repo` fixture: its folder's name


def snapshot(rds: redis.Redis, namespace: str) -> dict[str, object]:
    """Every key of the test's namespace with its value, to show that a refusal changed nothing."""
    found: dict[str, object] = {}
    for key in sorted(rds.scan_iter(match=namespace + "*")):
        kind = str(rds.type(key))
        reader: dict[str, Any] = {
            "hash": rds.hgetall,
            "set": rds.smembers,
            "string": rds.get,
            "stream": rds.xlen,
        }
        if kind == "zset":
            found[key] = rds.zrange(key, 0, -1, withscores=True)
        elif kind == "list":
            found[key] = rds.lrange(key, 0, -1)
        else:
            found[key] = reader[kind](key)
    return found


def ok(ib: IbRunner, *args: str, cwd: Path | None = None) -> str:
    done = ib.run(*args, cwd=cwd)
    assert done.returncode == 0, f"ib {' '.join(args)}: {done.stderr}"
    return done.stdout


def show(ib: IbRunner, task_id: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(ok(ib, "task", "show", task_id, "--json"))
    return loaded


def status_now(ib: IbRunner, task_id: str) -> str:
    """The task's status, or "" when `ib task show` fails this time (for `retry_until` checks)."""
    done = ib.run("task", "show", task_id, "--json")
    return str(json.loads(done.stdout).get("status", "")) if done.returncode == 0 else ""


def event_types(rds: redis.Redis, keys: Keys, task: str) -> list[tuple[str, str]]:
    """(type, from) of the events about one task, oldest first."""
    found = []
    for _id, fields in cast(list[tuple[str, dict[str, str]]], rds.xrange(keys.events)):
        event = json.loads(fields["e"])
        if event.get("task") == task:
            found.append((event["type"], event["from"]))
    return found


def one_error_line(done: subprocess.CompletedProcess[str]) -> str:
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    return lines[0]


# adding and looking


def test_add_list_show_tree(ib: IbRunner, tmp_path: Path) -> None:
    body = tmp_path / "body.md"
    body.write_text("Use JWT.\nRefresh tokens too.\n")
    assert (
        ok(ib, "task", "add", "Design auth", "--priority", "8", "--body-file", str(body)) == "design-auth\n"
    )
    assert ok(ib, "task", "add", "Endpoints", "--id", "api", "--after", "design-auth") == "api\n"
    ok(ib, "task", "add", "Tests", "--id", "tests", "--after", "design-auth,api", "--max-attempts", "2")
    ok(ib, "task", "add", "Someday", "--id", "later", "--draft", "--project", "other")

    listed = json.loads(ok(ib, "task", "list", "--json"))
    assert [(t["id"], t["status"], t["project"]) for t in listed] == [
        ("design-auth", "ready", P),
        ("api", "pending", P),
        ("tests", "pending", P),
    ]
    assert [t["id"] for t in json.loads(ok(ib, "task", "list", "--all", "--status", "draft", "--json"))] == [
        "later"
    ]
    table = ok(ib, "task", "list").splitlines()
    assert table[0].split()[:3] == ["id", "status", "pri"] and table[1].split()[0] == "design-auth"

    shown = show(ib, "api")
    assert shown["deps"] == [{"id": "design-auth", "status": "ready"}]
    assert shown["dependents"] == [{"id": "tests", "status": "pending"}]
    text = ok(ib, "task", "show", "design-auth")
    assert "Use JWT." in text and "before:    api (pending), tests (pending)" in text

    assert ok(ib, "task", "tree").splitlines() == [
        "○ design-auth [ready] p8 Design auth",
        "├─ · api [pending] p5 Endpoints",
        "│  └─ · tests [pending] p5 Tests",
        "└─ ↑ tests",
    ]


def test_edit_release_delete_and_notes(ib: IbRunner, store: TaskStore) -> None:
    store.add("First", project=P, task_id="first")
    store.add("Second", project=P, task_id="second", draft=True)
    ok(ib, "task", "edit", "second", "--after", "first", "--priority", "9", "--title", "Second, renamed")
    ok(ib, "task", "edit", "second", "--publish")
    second = store.get("second")
    assert (second.status, second.priority, second.title, second.after) == (
        "pending",
        9,
        "Second, renamed",
        ("first",),
    )

    assert ok(ib, "task", "claim", "--as", "a1") == "first\n"
    ok(ib, "task", "observe", "first", "the", "cache", "is", "cold")
    ok(ib, "task", "handoff", "first", "start from cache.py")
    assert store.get("first").attempt == 1
    ok(ib, "task", "release", "first")
    assert (store.get("first").status, store.get("first").attempt) == ("ready", 0)

    claimed = json.loads(ok(ib, "task", "claim", "--as", "a1", "--json"))
    assert claimed["id"] == "first" and claimed["claimed_by"] == "a1"
    assert (
        ok(ib, "task", "done", "first", "--as", "a1", "--summary", "warmed it")
        == "first: done\nnow ready: second\n"
    )
    inherited = json.loads(ok(ib, "task", "claim", "--as", "a2", "--json"))["notes"]
    assert [(n["kind"], n["source_task"]) for n in inherited] == [
        ("observation", "first"),
        ("handoff", "first"),
        ("result", "first"),
    ]
    ok(ib, "task", "fail", "second", "--as", "a2", "--reason", "flaky")
    assert store.get("second").status == "ready"
    refused = ib.run("task", "delete", "first")
    assert refused.returncode == 1 and "second depends on it" in one_error_line(refused)
    ok(ib, "task", "delete", "second")
    ok(ib, "task", "delete", "first")
    assert store.list() == []


def test_reclaim_releases_claims_of_ids_that_are_no_live_agent(ib: IbRunner, store: TaskStore) -> None:
    store.add("Stale", project=P, task_id="stale")
    store.claim(P, "ghost")
    assert ok(ib, "task", "reclaim", "--minutes", "60") == "no stale claims\n"
    assert ok(ib, "task", "reclaim", "--minutes", "0") == "released: stale\n"
    assert store.get("stale").status == "ready"


def test_the_acting_agent_comes_from_the_environment_else_is_user(ib: IbRunner, store: TaskStore) -> None:
    store.add("One", project=P, task_id="one")
    store.add("Two", project=P, task_id="two")
    assert ib.run("task", "claim", env={"IB_AGENT_ID": "env-agent"}).stdout == "one\n"
    ok(ib, "task", "claim")
    assert (store.get("one").claimed_by, store.get("two").claimed_by) == ("env-agent", "user")


# refusals: one line, exit 1


def _cycle(store: TaskStore, _cwd: Path) -> None:
    store.add("A", project=P, task_id="a")
    store.add("B", project=P, task_id="b", after=["a"])
    store.add("C", project=P, task_id="c", after=["b"])


def _claimed_by_other(store: TaskStore, _cwd: Path) -> None:
    store.add("A", project=P, task_id="a")
    store.claim(P, "someone-else")


def _done_once(store: TaskStore, _cwd: Path) -> None:
    store.add("A", project=P, task_id="a")
    store.claim(P, "me")
    store.done("a", "me")


def _files(_store: TaskStore, cwd: Path) -> None:
    (cwd / "big.md").write_text("x" * (1024 * 1024))
    (cwd / "latin1.md").write_bytes(b"caf\xe9\n")
    (cwd / "folder").mkdir()


REFUSALS: dict[str, tuple[Any, Sequence[str], str]] = {
    "cycle": (
        _cycle,
        ["task", "edit", "a", "--after", "c"],
        "a cannot wait for c: that makes a cycle a -> c -> b -> a",
    ),
    "self-dependency": (None, ["task", "add", "A", "--id", "a", "--after", "a"], "cannot depend on itself"),
    "self-dependency-on-edit": (_cycle, ["task", "edit", "b", "--after", "b"], "cannot depend on itself"),
    "unknown-dependency": (None, ["task", "add", "A", "--after", "nope"], "unknown dependency nope"),
    "priority-11": (
        None,
        ["task", "add", "A", "--priority", "11"],
        "bad priority 11: use a whole number from 0 to 10",
    ),
    "priority-minus-1": (None, ["task", "add", "A", "--priority", "-1"], "bad priority -1"),
    "priority-high": (None, ["task", "add", "A", "--priority", "high"], "bad priority 'high'"),
    "max-attempts-words": (None, ["task", "add", "A", "--max-attempts", "many"], "bad max attempts 'many'"),
    "body-1mb": (
        _files,
        ["task", "add", "A", "--body-file", "big.md"],
        "the body is 1048576 bytes; the limit is",
    ),
    "body-file-missing": (
        None,
        ["task", "add", "A", "--body-file", "nope.md"],
        "cannot read --body-file nope.md",
    ),
    "body-file-folder": (
        _files,
        ["task", "add", "A", "--body-file", "folder"],
        "cannot read --body-file folder",
    ),
    "body-file-not-utf8": (_files, ["task", "add", "A", "--body-file", "latin1.md"], "not UTF-8 text"),
    "body-twice": (None, ["task", "add", "A", "--body", "x", "--body-file", "y"], "not both"),
    "bad-id": (None, ["task", "add", "A", "--id", "Has Space"], "bad task id 'Has Space'"),
    "bad-as": (_cycle, ["task", "claim", "--as", "Not/Ok"], "bad agent id 'Not/Ok'"),
    "done-not-claimed-by-caller": (
        _claimed_by_other,
        ["task", "done", "a", "--as", "me"],
        "task a is claimed by someone-else, not me: only the claimer can finish it",
    ),
    "done-not-claimed": (_cycle, ["task", "done", "a", "--as", "me"], "task a is ready, not claimed"),
    "double-done": (_done_once, ["task", "done", "a", "--as", "me"], "task a is already done (by me)"),
    "fail-after-done": (_done_once, ["task", "fail", "a", "--as", "me"], "task a is already done"),
    "unknown-task": (None, ["task", "show", "ghost"], "no task ghost"),
    "edit-nothing": (_cycle, ["task", "edit", "a"], "nothing to change"),
    "timeout-without-wait": (None, ["task", "claim", "--timeout", "5"], "--timeout goes with --wait"),
    "release-unclaimed": (_cycle, ["task", "release", "a"], "task a is ready, not claimed"),
}


@pytest.mark.parametrize(("setup", "args", "says"), REFUSALS.values(), ids=REFUSALS.keys())
def test_refusals_are_one_line_and_exit_1(
    ib: IbRunner,
    store: TaskStore,
    rds: redis.Redis,
    namespace: str,
    setup: Any,
    args: Sequence[str],
    says: str,
) -> None:
    if setup is not None:
        setup(store, ib.cwd)
    before = snapshot(rds, namespace)
    done = ib.run(*args)
    assert done.returncode == 1, done.stderr
    line = one_error_line(done)
    assert line.startswith("ib task: error: ") and says in line
    assert done.stdout == ""
    assert snapshot(rds, namespace) == before  # a refusal changes nothing


def test_claim_with_nothing_ready_exits_3_and_says_so(ib: IbRunner) -> None:
    ok(ib, "task", "add", "Later", "--id", "later", "--draft")
    done = ib.run("task", "claim")
    assert (done.returncode, done.stdout) == (NOTHING_READY, "")
    assert one_error_line(done) == f"ib task: nothing ready in project {P} (exit 3)"
    helped = ib.run("task", "claim", "--help", env={"COLUMNS": "200"}).stdout
    assert (
        "Exit codes: 0 claimed; 3 nothing ready (at once, or within --timeout with --wait); 1 error."
        in helped
    )


# claim --wait: the Linda in()


def _waiting(ib: IbRunner, agent: str, timeout: str) -> subprocess.Popen[str]:
    """A `claim --wait` process, returned once it says it waits (its first claim found nothing)."""
    proc = ib.popen("task", "claim", "--wait", "--timeout", timeout, "--as", agent, "--json")
    assert proc.stderr is not None
    line = proc.stderr.readline()
    assert "waiting for a ready task in project repo" in line, line
    return proc


def test_claim_wait_is_woken_by_another_process_finishing_the_last_dependency(
    ib: IbRunner, rds: redis.Redis, keys: Keys
) -> None:
    ok(ib, "task", "add", "Schema", "--id", "schema")
    ok(ib, "task", "add", "Auth", "--id", "auth")
    ok(ib, "task", "add", "Endpoints", "--id", "endpoints", "--after", "schema,auth")
    ok(ib, "task", "claim", "--as", "builder")
    ok(ib, "task", "claim", "--as", "builder")
    waiter = _waiting(ib, "waiter", "60")
    try:
        ok(ib, "task", "done", "schema", "--as", "builder")  # one dependency left: nothing for the waiter
        assert waiter.poll() is None
        ok(ib, "task", "done", "auth", "--as", "builder")
        out, err = waiter.communicate(timeout=30)
    finally:
        waiter.kill()
    assert waiter.returncode == 0, err
    claimed = json.loads(out)
    assert (claimed["id"], claimed["claimed_by"], claimed["attempt"]) == ("endpoints", "waiter", 1)
    assert event_types(rds, keys, "endpoints")[-2:] == [("task_ready", "system"), ("task_claimed", "waiter")]


def test_two_waiting_claimers_and_one_task_exactly_one_gets_it(ib: IbRunner) -> None:
    # the window must outlast starting the second claimer and `task add` (each a process start, which
    # takes seconds on a loaded machine), and the loser waits all of it
    first, second = _waiting(ib, "first", "10"), _waiting(ib, "second", "10")
    try:
        ok(ib, "task", "add", "The only one", "--id", "only")
        results = [(p.communicate(timeout=30), p.returncode) for p in (first, second)]
    finally:
        first.kill()
        second.kill()
    codes = sorted(code for _out, code in results)
    assert codes == [0, NOTHING_READY]
    winner = next(out for (out, _err), code in results if code == 0)
    loser_err = next(err for (_out, err), code in results if code == NOTHING_READY)
    assert json.loads(winner)["id"] == "only"
    assert loser_err.strip().splitlines()[-1] == f"ib task: nothing ready in project {P} within 10 s (exit 3)"
    assert show(ib, "only")["claimed_by"] in ("first", "second")


def test_claim_wait_takes_a_ready_task_at_once(ib: IbRunner) -> None:
    ok(ib, "task", "add", "Ready", "--id", "ready")
    done = ib.run("task", "claim", "--wait", "--timeout", "0")
    assert (done.returncode, done.stdout, done.stderr) == (0, "ready\n", "")


# done runs the task's tests first


def test_done_runs_the_test_command_in_the_agents_worktree(agents_ib: IbRunner, repo: Path) -> None:
    ib = agents_ib
    ok(ib, "task", "add", "Paint", "--id", "paint", "--test-cmd", "echo checking; ls shed.txt")
    assert ok(ib, "new-agent", "Hold on.\nfake: wait", "--name", "tester", "--task", "paint") == "tester\n"
    assert show(ib, "paint")["claimed_by"] == "tester"
    worktree = repo / ".ib" / "agents" / "tester" / "repo"

    failed = ib.run("task", "done", "paint", "--summary", "painted", cwd=worktree)
    assert failed.returncode == 1
    error = failed.stderr.strip().splitlines()[-1]
    assert error.startswith("ib task: error: tests failed, so paint is not done: test command")
    assert "back to ready (attempt 1/3)" in error
    task = show(ib, "paint")
    assert task["status"] == "ready"
    note = task["notes"][-1]
    assert note["kind"] == "test_failure" and f"in {worktree}" in note["text"]
    assert "checking" in note["text"] and "shed.txt" in note["text"]

    ok(ib, "task", "claim", "--as", "tester")
    (worktree / "shed.txt").write_text("blue\n")  # only in the agent's worktree, not in the repository
    assert ok(ib, "task", "done", "paint", "--summary", "painted", cwd=worktree) == "paint: done\n"
    assert (show(ib, "paint")["status"], show(ib, "paint")["summary"]) == ("done", "painted")


def test_done_fails_the_task_when_its_tests_run_out_of_time(ib: IbRunner) -> None:
    ok(ib, "task", "add", "Slow", "--id", "slow", "--test-cmd", "sleep 30", "--max-attempts", "1")
    ok(ib, "task", "claim")
    done = ib.run("task", "done", "slow", "--test-timeout", "0.5")
    assert done.returncode == 1
    error = done.stderr.strip().splitlines()[-1]
    assert "was stopped after 0.5 s (time limit)" in error and "failed for good (attempt 1/1)" in error
    assert show(ib, "slow")["status"] == "failed"


def test_done_of_a_task_held_by_another_runs_no_tests(ib: IbRunner) -> None:
    ok(ib, "task", "add", "Guarded", "--id", "guarded", "--test-cmd", "touch ran.txt")
    ok(ib, "task", "claim", "--as", "holder")
    done = ib.run("task", "done", "guarded")
    assert done.returncode == 1 and "claimed by holder, not user" in one_error_line(done)
    assert not (ib.cwd / "ran.txt").exists()


# new-agent --task and the Stop hook


def test_new_agent_refuses_a_task_it_cannot_have(agents_ib: IbRunner) -> None:
    ok(agents_ib, "task", "add", "First", "--id", "first")
    ok(agents_ib, "task", "add", "Second", "--id", "second", "--after", "first")
    for task, says in [("second", "task second is pending"), ("ghost", "no task ghost")]:
        done = agents_ib.run("new-agent", "x", "--task", task)
        assert done.returncode == 1 and says in one_error_line(done)
    assert ok(agents_ib, "list", "--json").strip() == "[]"


def _stop(ib: IbRunner, agent: str, message: str) -> None:
    payload = {"session_id": "s1", "cwd": str(ib.cwd), "last_assistant_message": message}
    done = ib.run("hook", "stop", stdin=json.dumps(payload), env={"IB_AGENT_ID": agent})
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")


STOP_CASES: dict[str, tuple[str, str, str, str | None]] = {
    # holder, test command, last message → status afterwards, summary
    "finishes-its-claimed-task": ("a1", "", "Painted it blue.\n\nI HAVE COMPLETED THE GOAL", "done"),
    "marker-only-no-summary": ("a1", "", "I HAVE COMPLETED THE GOAL", "done"),
    "waiting-leaves-it": ("a1", "", "Which blue?\nWAITING", "claimed"),
    "held-by-another": ("a2", "", "Painted it.\nI HAVE COMPLETED THE GOAL", "claimed"),
    "tests-are-for-ib-task-done": ("a1", "true", "Painted it.\nI HAVE COMPLETED THE GOAL", "claimed"),
}


@pytest.mark.parametrize(
    ("holder", "test_cmd", "message", "status"), STOP_CASES.values(), ids=STOP_CASES.keys()
)
def test_stop_hook_finishes_the_agents_task(
    ib: IbRunner, rds: redis.Redis, keys: Keys, holder: str, test_cmd: str, message: str, status: str
) -> None:
    ok(ib, "task", "add", "Paint", "--id", "paint", *(["--test-cmd", test_cmd] if test_cmd else []))
    ok(ib, "task", "claim", "--as", holder)
    rds.hset(keys.agent("a1"), mapping={"id": "a1", "role": "worker", "project": P, "task": "paint"})
    _stop(ib, "a1", message)
    task = show(ib, "paint")
    assert (task["status"], task["claimed_by"]) == (status, holder)
    if status == "done":
        first = message.splitlines()[0]
        assert task["summary"] == (None if first == "I HAVE COMPLETED THE GOAL" else first)
        types = [t for t, _ in event_types(rds, keys, "paint")]
        assert types[-2:] == ["task_done", "complete"]


FAKE_AGENTS: dict[str, tuple[list[str], str]] = {
    # script of the fake agent → the task's summary
    "hook-finishes-the-task": (
        ["fake: write shed.txt blue", "fake: commit paint", "fake: done Painted the shed blue"],
        "Painted the shed blue",
    ),
    "agent-finishes-it-itself": (
        ["fake: run ib task done paint --summary by-hand", "fake: done All painted"],
        "by-hand",
    ),
}


@pytest.mark.parametrize(("steps", "summary"), FAKE_AGENTS.values(), ids=FAKE_AGENTS.keys())
def test_a_fake_agent_given_a_task_gets_it_finished(
    agents_ib: IbRunner, rds: redis.Redis, keys: Keys, steps: list[str], summary: str
) -> None:
    ib = agents_ib
    ok(ib, "task", "add", "Paint the shed", "--id", "paint", "--body", "\n".join(["Paint it blue.", *steps]))
    assert ok(ib, "new-agent", "--task", "paint", "--name", "painter", "--worker") == "painter\n"
    agent = json.loads(ok(ib, "list", "--json"))[0]
    assert (agent["task"], agent["project"]) == ("paint", P)

    retry_until(lambda: status_now(ib, "paint") == "done", timeout=30, what="the task done")
    task = show(ib, "paint")
    assert (task["claimed_by"], task["summary"]) == ("painter", summary)
    history = event_types(rds, keys, "paint")
    assert [t for t, _ in history].count("task_done") == 1
    assert ("task_claimed", "painter") in history and ("task_done", "painter") in history
    retry_until(lambda: ("complete", "painter") in event_types(rds, keys, "paint"), what="complete event")
