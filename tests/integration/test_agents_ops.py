"""Agent operations against real tmux, git and Redis: conflicts, nuke, the worker service, bad input."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
import redis

from bus.commands.worker_commands import Send
from bus.commands.worker_rpc import submit
from bus.wire.keys import Keys
from tests.cli import IbRunner, git
from tests.streams import stream_entries
from tests.waiting import retry_until


def spawn(ib: IbRunner, name: str, *lines: str, extra: tuple[str, ...] = (), cwd: Path | None = None) -> None:
    done = ib.run("new-agent", "\n".join(["Do a thing.", *lines]), "--name", name, *extra, cwd=cwd)
    assert done.returncode == 0, done.stderr


def events(rds: redis.Redis, keys: Keys) -> list[dict[str, object]]:
    return [json.loads(fields["e"]) for _id, fields in stream_entries(rds, keys.events)]


def wait_state(ib: IbRunner, agent: str, state: str) -> None:
    def current() -> bool:
        ib.run("worker", "--once")
        rows = json.loads(ib.run("list", "--json").stdout)
        return any(r["id"] == agent and r["state"] == state for r in rows)

    retry_until(current, timeout=30, interval=0.3, what=f"{agent} to be {state}")


def test_merge_conflict_keeps_agent_and_repo_clean(
    agents_ib: IbRunner, repo: Path, rds: redis.Redis, keys: Keys
) -> None:
    ib = agents_ib
    spawn(ib, "clash", "fake: write README.md from the agent", "fake: commit agent edit", "fake: done")
    wait_state(ib, "clash", "complete")
    (repo / "README.md").write_text("from the person\n")
    git(repo, "commit", "-qam", "person edit")
    done = ib.run("merge", "clash")
    assert done.returncode == 1
    assert "conflicted files" in done.stderr and "README.md" in done.stderr
    assert "Traceback" not in done.stderr
    assert git(repo, "status", "--porcelain").strip() == ""
    assert (repo / "README.md").read_text() == "from the person\n"
    assert [r["id"] for r in json.loads(ib.run("list", "--json").stdout)] == ["clash"]
    conflict = [e for e in events(rds, keys) if e["type"] == "merge_conflict"]
    assert conflict and conflict[0]["data"]["files"] == ["README.md"]  # type: ignore[index]
    check = ib.run("merge-check", "clash")
    assert check.returncode == 1 and "README.md" in check.stdout


def test_nuke_a_tree_of_three(agents_ib: IbRunner, repo: Path) -> None:
    ib = agents_ib
    spawn(ib, "boss", "fake: wait")
    spawn(ib, "mid", "fake: wait", extra=("--manager", "boss"))
    spawn(ib, "leaf", "fake: wait", extra=("--manager", "mid", "--worker"))
    spawn(ib, "bystander", "fake: wait")
    tree = ib.run("tree").stdout
    assert tree.index("boss") < tree.index("mid") < tree.index("leaf")
    done = ib.run("nuke", "boss")
    assert done.returncode == 0, done.stderr
    assert "3 agent(s)" in done.stdout
    left = [r["id"] for r in json.loads(ib.run("list", "--json").stdout)]
    assert left == ["bystander"]
    for name in ("boss", "mid", "leaf"):
        assert not (repo / ".ib" / "agents" / name).exists()
        assert not git(repo, "branch", "--list", f"agent/{name}").strip()
    sessions = subprocess.run(
        ["tmux", "-L", ib.env["IB_TMUX_SOCKET"], "list-sessions", "-F", "#{session_name}"],
        capture_output=True,
        text=True,
        check=False,
    ).stdout
    assert "bystander" in sessions and "boss" not in sessions


def test_worker_cannot_spawn(agents_ib: IbRunner, repo: Path) -> None:
    ib = agents_ib
    spawn(ib, "lead", "fake: wait")
    spawn(ib, "helper", "fake: wait", extra=("--manager", "lead", "--worker"))
    inside = repo / ".ib" / "agents" / "helper" / "repo"
    refused = ib.run("new-agent", "sub task", cwd=inside)
    assert refused.returncode == 1
    assert "workers cannot spawn" in refused.stderr
    child = ib.run(
        "new-agent", "sub task\nfake: wait", "--name", "child", cwd=repo / ".ib" / "agents" / "lead" / "repo"
    )
    assert child.returncode == 0, child.stderr
    rows = {r["id"]: r for r in json.loads(ib.run("list", "--json").stdout)}
    assert rows["child"]["manager"] == "lead"
    assert rows["child"]["base_branch"] == "agent/lead"


def test_worker_restart_readopts_without_duplicates(
    agents_ib: IbRunner, rds: redis.Redis, keys: Keys
) -> None:
    ib = agents_ib
    spawn(ib, "steady", "fake: wait")
    wait_state(ib, "steady", "waiting")
    before = len([e for e in events(rds, keys) if e["type"] == "state"])
    for _ in range(3):
        assert ib.run("worker", "--once").returncode == 0
    after = [e for e in events(rds, keys) if e["type"] == "state"]
    assert len(after) == before  # nothing changed, so nothing was published again
    assert json.loads(ib.run("list", "--json").stdout)[0]["state"] == "waiting"
    subprocess.run(["tmux", "-L", ib.env["IB_TMUX_SOCKET"], "kill-server"], check=False)
    assert ib.run("worker", "--once").returncode == 0
    stopped = [e for e in events(rds, keys) if e["type"] == "stopped"]
    assert [e["agent"] for e in stopped] == ["steady"]
    assert ib.run("worker", "--once").returncode == 0
    assert len([e for e in events(rds, keys) if e["type"] == "stopped"]) == 1


def test_same_operation_through_the_bus(
    agents_ib: IbRunner, tmp_path: Path, rds: redis.Redis, keys: Keys
) -> None:
    ib = agents_ib
    spawn(ib, "remote", "fake: wait")
    wait_state(ib, "remote", "waiting")
    worker = ib.env["IB_WORKER_ID"]
    command = submit(rds, keys, worker, Send(agent="remote", text="via the bus; ok"))
    bad = submit(rds, keys, worker, Send(agent="nobody", text="x"))
    assert ib.run("worker", "--once").returncode == 0
    answer = json.loads(rds.lpop(keys.reply(command)))  # type: ignore[arg-type]
    assert answer == {"ok": True, "result": "remote", "error": ""}
    failed = json.loads(rds.lpop(keys.reply(bad)))  # type: ignore[arg-type]
    assert failed["ok"] is False and "no agent 'nobody'" in failed["error"]
    received = tmp_path / "received.txt"
    retry_until(lambda: received.exists() and "via the bus; ok" in received.read_text())
    ib.run("send", "remote", "via the cli; ok")
    retry_until(lambda: "via the cli; ok" in received.read_text())
    assert received.read_text() == "via the bus; ok\nvia the cli; ok\n"


def test_worker_publishes_output_items(agents_ib: IbRunner, rds: redis.Redis, keys: Keys) -> None:
    ib = agents_ib
    spawn(ib, "talker", "fake: write notes.txt hello", "fake: done")
    wait_state(ib, "talker", "complete")

    def items() -> list[dict[str, str]]:
        ib.run("worker", "--once")
        return [f for _i, f in stream_entries(rds, keys.output("talker"))]

    got = retry_until(lambda: [i for i in items() if i["kind"] == "tool_result"], timeout=20)
    texts = [i["text"] for i in items()]
    assert any(t.startswith("**Write**(") for t in texts), texts
    assert got


def test_reserved_names_are_refused(agents_ib: IbRunner) -> None:
    done = agents_ib.run("new-agent", "goal", "--name", "user")
    assert done.returncode == 1 and "reserved" in done.stderr


def test_an_agent_program_that_is_not_installed_is_refused_before_anything_is_made(
    agents_ib: IbRunner, repo: Path
) -> None:
    done = agents_ib.run("new-agent", "goal", "--name", "a1", env={"IB_AGENT_COMMAND": "claude-not-here --x"})
    assert done.returncode == 1 and done.stderr.count("\n") == 1, done.stderr
    assert "'claude-not-here' (IB_AGENT_COMMAND) is not installed or not on PATH" in done.stderr
    assert not (repo / ".ib" / "agents" / "a1").exists()
    assert "agent/a1" not in git(repo, "branch", "--list")
    assert "a1" not in agents_ib.run("list").stdout


@pytest.mark.parametrize(
    "name",
    ["../up", "a/b", "has space", "a:b", "a.b", "UPPER", "-dash", ""],
    ids=["dotdot", "slash", "space", "colon", "dot", "upper", "dash", "empty"],
)
def test_bad_agent_ids_are_refused(agents_ib: IbRunner, repo: Path, name: str) -> None:
    done = agents_ib.run("new-agent", "goal", "--name", name)
    assert done.returncode == 1
    assert "bad agent id" in done.stderr and "Traceback" not in done.stderr
    assert not (repo / ".ib" / "agents").exists() or not any((repo / ".ib" / "agents").iterdir())


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["send", "ghost", "hi"], "no agent 'ghost'"),
        (["look", "ghost"], "no agent 'ghost'"),
        (["kill", "ghost"], "no agent 'ghost'"),
        (["merge", "ghost"], "no agent 'ghost'"),
        (["new-agent", ""], "needs a goal"),
        (["new-agent", "x", "--manager", "ghost"], "not an agent"),
        (["new-agent", "x", "--prompt-file", "/nonexistent/file"], "cannot read --prompt-file"),
    ],
    ids=["send", "look", "kill", "merge", "empty-goal", "unknown-manager", "missing-prompt-file"],
)
def test_clear_errors(agents_ib: IbRunner, args: list[str], says: str) -> None:
    done = agents_ib.run(*args)
    assert done.returncode == 1
    assert says in done.stderr and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_deleted_worktree_and_dead_tmux(agents_ib: IbRunner, repo: Path) -> None:
    import shutil

    ib = agents_ib
    spawn(ib, "fragile", "fake: wait")
    shutil.rmtree(repo / ".ib" / "agents" / "fragile" / "repo")
    status = ib.run("status", "fragile")
    assert status.returncode == 0 and "worktree missing" in status.stdout
    subprocess.run(["tmux", "-L", ib.env["IB_TMUX_SOCKET"], "kill-server"], check=False)
    sent = ib.run("send", "fragile", "anyone there?")
    assert sent.returncode == 1 and "not running" in sent.stderr
    looked = ib.run("look", "fragile")
    assert looked.returncode == 1 and "not running" in looked.stderr
    killed = ib.run("kill", "fragile", "--force")
    assert killed.returncode == 0, killed.stderr
    assert not git(repo, "branch", "--list", "agent/fragile").strip()
    assert ib.run("list", "--json").stdout.strip() == "[]"


def test_a_message_sent_while_the_program_still_starts_reaches_it(
    agents_ib: IbRunner, tmp_path: Path
) -> None:
    """`ib send` at once after `ib new-agent`, to a program that takes seconds to start (Claude Code on a
    busy machine): the text waits for the program instead of going into a pane nobody reads yet (the
    terminal dropped it when the program took the keyboard)."""
    ib = agents_ib
    slow = tmp_path / "slow-agent"
    slow.write_text(f'#!/bin/sh\nsleep 10\nexec {ib.env["IB_AGENT_COMMAND"]} "$@"\n')
    slow.chmod(0o755)
    ib.env["IB_AGENT_COMMAND"] = str(slow)
    spawn(ib, "sleepy", "fake: wait")
    done = ib.run("send", "sleepy", "are you there?")
    assert done.returncode == 0, done.stderr
    received = tmp_path / "received.txt"
    retry_until(lambda: received.exists() and "are you there?" in received.read_text(), timeout=30)


def test_messages_sent_at_once_arrive_whole_one_after_the_other(agents_ib: IbRunner, tmp_path: Path) -> None:
    """Three senders at once into one pane (the person, a worker's note to its manager, a reply from
    Telegram): each message is typed and submitted alone, so each arrives whole."""
    ib = agents_ib
    spawn(ib, "busy", "fake: wait")
    texts = [f"message {n}: " + f"{n}" * 150 for n in range(3)]
    senders = [ib.popen("send", "busy", text) for text in texts]
    for sender in senders:
        assert sender.wait(timeout=120) == 0, sender.stderr.read() if sender.stderr else ""
    received = tmp_path / "received.txt"
    retry_until(lambda: received.exists() and len(received.read_text().splitlines()) >= 3, timeout=30)
    assert sorted(received.read_text().splitlines()) == texts
