"""`ib` run by an agent (a fake agent's shell commands, so `ib` is a child of the agent's pane as with
Claude Code) acts as that agent and no other: a manager may act on its own children only, whatever it
puts in `ib`'s environment; its path arguments stay in its worktree; and the worker checks what an agent
sends it over the bus the same way."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest
import redis

from bus.commands.worker_commands import Kill
from bus.commands.worker_rpc import CommandFailed, request
from bus.connection.clients import client_for
from bus.wire.keys import Keys
from tests.cli import IbRunner
from tests.waiting import retry_until

MGR, KID, VICTIM = "mgr", "kid", "victim"


def _step(worktree: Path, name: str, command: str) -> str:
    """A fake-agent step that runs `command` from a script in the agent's worktree (so the PreToolUse
    hook, the other line, does not see it), its output and exit code in a file."""
    (worktree / f"try-{name}.sh").write_text(command + "\n")
    return f'fake: run sh try-{name}.sh > out-{name}.txt 2>&1; echo "exit $?" >> out-{name}.txt'


def _outcome(ib: IbRunner, worktree: Path, name: str) -> str:
    path = worktree / f"out-{name}.txt"
    try:
        return retry_until(
            lambda: path.read_text() if path.exists() and "exit " in path.read_text() else "",
            timeout=60,
            what=f"the result of {name}",
        )
    except AssertionError as e:
        raise AssertionError(f"{e}\n{MGR}'s pane:\n{ib.run('look', MGR, '--lines', '300').stdout}") from None


def _alive(ib: IbRunner) -> list[str]:
    return [line.split()[0] for line in ib.run("list").stdout.splitlines()[1:] if line.strip()]


@pytest.fixture
def family(agents_ib: IbRunner, repo: Path) -> Path:
    """`mgr` with its child `kid`, and `victim`, a top agent of the person's: mgr's worktree."""
    for name, extra in ((VICTIM, ()), (MGR, ()), (KID, ("--manager", MGR, "--worker"))):
        done = agents_ib.run("new-agent", "fake: wait", "--name", name, *extra)
        assert done.returncode == 0, done.stderr
    (repo / ".ib" / "secret.txt").write_text("the bus password\n")
    worktree = repo / ".ib" / "agents" / MGR / "repo"
    (worktree / "s").symlink_to(repo / ".ib" / "secret.txt")  # as from the agent's python: no hook sees it
    return worktree


STEPS = {
    "kill-sibling": (
        f"ib kill {VICTIM} --force",
        f"ib kill: error: agent {MGR} may not kill {VICTIM} (not its",
    ),
    "forged-id": (
        f"IB_AGENT_ID={VICTIM} IB_AGENT_ROLE=manager IB_WORKER_ID=forged ib kill {VICTIM} --force",
        f"agent {MGR} may not kill {VICTIM} (not its child)",
    ),
    "merge-sibling": (f"ib merge {VICTIM}", "not its child"),
    "dot-dot-id": ("ib kill ..", "not an agent id"),
    "kill-ghost": ("ib kill ghost", "(no such agent)"),
    "notify-as-victim": (f"ib notify --from {VICTIM} hi", f"may not notify as '{VICTIM}'"),
    "log-as-victim": (f"ib log --agent {VICTIM} forged", "only for itself"),
    "claim-as-victim": (f"ib task claim --as {VICTIM}", "only for itself"),
    "body-file-symlink": (
        "ln -s {root}/.ib/secret.txt s; ib task add leak --body-file s",
        "outside the agent's",
    ),
    "body-file-dotdot": (
        "ib task add leak --body-file ../../../secret.txt",
        "outside the agent's worktree",
    ),
    "test-cmd": ("ib task add t --test-cmd 'touch {root}/pwned'", "only the person sets code"),
    "hooks": ("ib hooks install", "the person's own set-up"),
    "bus": ("ib bus stop", "the person's own set-up"),
    "no-worktree": ("ib new-agent --no-worktree --name c2 x", "--no-worktree"),
    "send-child": (f"ib send {KID} hello", "exit 0"),
    "kill-child": (f"ib kill {KID} --force", "exit 0"),
}


@pytest.mark.timeout(300)
def test_a_manager_acts_on_its_own_children_only(agents_ib: IbRunner, repo: Path, family: Path) -> None:
    steps = "\n".join(_step(family, name, command.format(root=repo)) for name, (command, _) in STEPS.items())
    assert agents_ib.run("send", MGR, steps + "\nfake: wait").returncode == 0
    failures = []
    for name, (_, says) in STEPS.items():
        got = _outcome(agents_ib, family, name)
        if says not in got or "Traceback" in got or ("exit 0" not in says and "exit 1" not in got):
            failures.append(f"{name}: {got}")
    assert not failures, "\n".join(failures)
    assert "secret" not in agents_ib.run("task", "list").stdout and not (repo / "pwned").exists()
    assert not (repo / ".ib" / "agents" / "c2").exists()
    retry_until(lambda: KID not in _alive(agents_ib), what=f"{KID} killed by its manager")
    assert VICTIM in _alive(agents_ib)


def test_a_person_is_not_held_by_the_boundary(agents_ib: IbRunner, repo: Path, family: Path) -> None:
    """The same commands from the person's own shell (no agent among its ancestors), even with an agent's
    IB_AGENT_ID in the environment."""
    done = agents_ib.run("kill", VICTIM, "--force", env={"IB_AGENT_ID": MGR, "IB_AGENT_ROLE": "worker"})
    assert done.returncode == 0, done.stderr
    assert VICTIM not in _alive(agents_ib)


def test_the_worker_refuses_what_an_agent_may_not_ask(
    agents_ib: IbRunner, family: Path, redis_url: str, rds: redis.Redis, keys: Keys
) -> None:
    worker_id = agents_ib.env["IB_WORKER_ID"]
    worker = agents_ib.popen("worker")
    try:
        retry_until(lambda: rds.exists(keys.worker(worker_id)), 30, what="the worker")
        client = client_for(redis_url, blocking=True)
        with pytest.raises(CommandFailed, match=f"agent {MGR} may not kill {VICTIM} \\(not its child\\)"):
            request(client, keys, worker_id, Kill(agent=VICTIM, force=True), sender=MGR, timeout=30)
        with pytest.raises(CommandFailed, match=f"agent {KID} may not run `ib kill`"):
            request(client, keys, worker_id, Kill(agent=VICTIM, force=True), sender=KID, timeout=30)
        assert VICTIM in _alive(agents_ib)
        request(client, keys, worker_id, Kill(agent=KID, force=True), sender=MGR, timeout=60)
        assert KID not in _alive(agents_ib)
    finally:
        worker.send_signal(signal.SIGTERM)
        worker.wait(timeout=15)


@pytest.mark.timeout(200)
def test_a_tasks_tests_run_for_an_agent_inside_bubblewrap(
    agents_ib: IbRunner, repo: Path, family: Path
) -> None:
    """The person's test command runs over the agent's files: when the agent's `ib task done` runs it, it
    writes only in the worktree and sees neither `.ib/` nor the rest of the repository as writable."""
    test_cmd = f"touch inside.txt; cat {repo}/.ib/secret.txt > leaked.txt; touch {repo}/pwned-by-tests; true"
    added = agents_ib.run("task", "add", "Boxed tests", "--id", "boxed", "--test-cmd", test_cmd)
    assert added.returncode == 0, added.stderr
    step = _step(family, "claim-done", "ib task claim && ib task done boxed")
    assert agents_ib.run("send", MGR, step + "\nfake: wait").returncode == 0
    assert "exit 0" in _outcome(agents_ib, family, "claim-done")
    assert (family / "inside.txt").exists()
    assert (family / "leaked.txt").read_text() == ""
    assert not (repo / "pwned-by-tests").exists()
