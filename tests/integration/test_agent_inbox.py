"""Which way a message reaches an agent, with fake agents and a stand-in inbox (the real Claude Code is in
test_agent_inbox_claude.py): another agent's message goes into the agent's recorded inbox, the person's
is typed; without an inbox, and with a stale one (a killed session's socket, reaped or not, a regular file, a
FIFO), it is typed, the inbox is dropped and `ib info` says so in one line."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import redis

from bus.inbox.session_inbox import agent_record_commands
from bus.wire.keys import Keys
from tests.cli import IbRunner
from tests.session_inbox import RecordingInbox, killed_session, unreaped_session
from tests.waiting import retry_until


def _record(rds: Any, keys: Keys, agent: str, socket_path: Path, token: str, root: Path) -> None:
    """Record an agent's inbox as its SessionStart hook would."""
    pipe = rds.pipeline()
    for command in agent_record_commands(keys, agent, (str(socket_path), token), str(root), str(root)):
        pipe.execute_command(*command)
    pipe.execute()


def _received(tmp_path: Path) -> str:
    path = tmp_path / "received.txt"
    return path.read_text() if path.exists() else ""


def _spawn(ib: IbRunner, rds: redis.Redis, keys: Keys, name: str) -> None:
    """A fake agent, once its SessionStart hook ran (it records the agent's inbox, here none)."""
    made = ib.run("new-agent", "Work.\nfake: wait", "--name", name)
    assert made.returncode == 0, made.stderr
    retry_until(lambda: rds.hget(keys.agent(name), "transcript_path"), 30, 0.05, "the SessionStart hook")


def test_another_agents_message_goes_into_the_inbox_and_the_persons_is_typed(
    agents_ib: IbRunner, rds: redis.Redis, keys: Keys, repo: Path, tmp_path: Path
) -> None:
    _spawn(agents_ib, rds, keys, "kid")
    assert "typed into its pane (no inbox recorded:" in agents_ib.run("info", "kid").stdout
    with RecordingInbox(tmp_path / f"{os.getpid()}.sock") as inbox:
        _record(rds, keys, "kid", inbox.path, inbox.token, repo)
        info = agent_inbox_info(agents_ib, "kid")
        assert info == {"from_agents": "inbox", "from_you": "pane", "inbox": str(inbox.path)}
        assert f"from agents through its inbox {inbox.path}" in agents_ib.run("info", "kid").stdout

        sent = agents_ib.run("send", "--from", "boss", "kid", "add the tests too")
        assert sent.returncode == 0, sent.stderr
        retry_until(
            lambda: inbox.texts() == ["[sent by agent boss]: add the tests too"], 30, 0.05, "the inbox"
        )
        assert inbox.tokens == [inbox.token]

        by_you = agents_ib.run("send", "kid", "the person speaks")
        assert by_you.returncode == 0, by_you.stderr
        retry_until(lambda: "the person speaks" in _received(tmp_path), 30, 0.05, "the typed message")
        assert "add the tests too" not in _received(tmp_path)  # never typed as well
        assert len(inbox.texts()) == 1
    log = (repo / ".ib" / "agents" / "kid" / "agent.log").read_text()
    assert "Received message from boss (through its inbox): add the tests too" in log


def _regular_file(folder: Path) -> Path:
    path = folder / "4242.sock"
    path.write_text("not a socket")
    return path


def _fifo(folder: Path) -> Path:
    path = folder / "4343.sock"
    os.mkfifo(path)
    return path


@pytest.mark.parametrize(
    ("make", "said"),
    [
        (killed_session, "is gone (the session was killed)"),
        (_regular_file, "is a file, not a socket"),
        (_fifo, "is a FIFO, not a socket"),
    ],
    ids=["killed-9", "regular-file", "fifo"],
)
def test_a_stale_inbox_is_dropped_with_one_line_and_the_message_typed(
    agents_ib: IbRunner,
    rds: redis.Redis,
    keys: Keys,
    repo: Path,
    tmp_path: Path,
    make: Callable[[Path], Path],
    said: str,
) -> None:
    _spawn(agents_ib, rds, keys, "kid")
    folder = tmp_path / "socks"
    folder.mkdir()
    _record(rds, keys, "kid", make(folder), "t", repo)
    sent = agents_ib.run("send", "--from", "boss", "kid", "are you there")
    assert sent.returncode == 0, sent.stderr
    retry_until(lambda: "[sent by agent boss]: are you there" in _received(tmp_path), 30, 0.05, "typed")
    assert not rds.hget(keys.agent_inbox("kid"), "socket")
    out = agents_ib.run("info", "kid").stdout
    lines = [line for line in out.splitlines() if "dropped its inbox" in line]
    assert len(lines) == 1 and said in lines[0] and lines[0].startswith("messages:  typed into its pane"), out
    again = agents_ib.run("send", "--from", "boss", "kid", "still there")  # typed; no second drop
    assert again.returncode == 0, again.stderr
    assert len([x for x in agents_ib.run("info", "kid").stdout.splitlines() if "dropped its inbox" in x]) == 1


def test_an_inbox_found_stale_by_ib_info_is_dropped_there(
    agents_ib: IbRunner, rds: redis.Redis, keys: Keys, repo: Path, tmp_path: Path
) -> None:
    """Nothing was sent since the session died: `ib info` itself finds the inbox stale and drops it."""
    _spawn(agents_ib, rds, keys, "kid")
    folder = tmp_path / "socks"
    folder.mkdir()
    _record(rds, keys, "kid", killed_session(folder), "t", repo)
    out = agents_ib.run("info", "kid").stdout
    assert "dropped its inbox" in out and "the session was killed" in out
    assert agent_inbox_info(agents_ib, "kid")["from_agents"] == "pane"


def test_an_inbox_whose_killed_session_is_not_reaped_yet_is_stale(
    agents_ib: IbRunner, rds: redis.Redis, keys: Keys, repo: Path, tmp_path: Path
) -> None:
    """tmux 3.3a can miss the SIGCHLD of a pane's program it lost to `kill -9` and leave it a zombie: its
    pid still answers `kill -0`, yet nobody listens."""
    _spawn(agents_ib, rds, keys, "kid")
    folder = tmp_path / "socks"
    folder.mkdir()
    with unreaped_session(folder) as path:
        _record(rds, keys, "kid", path, "t", repo)
        out = agents_ib.run("info", "kid").stdout
    assert "dropped its inbox" in out and "the session was killed" in out, out


def agent_inbox_info(ib: IbRunner, agent: str) -> dict[str, str]:
    done = ib.run("info", agent, "--json")
    assert done.returncode == 0, done.stderr
    found: dict[str, str] = json.loads(done.stdout)["messages"]
    return found
