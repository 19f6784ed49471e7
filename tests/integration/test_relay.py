"""The worker's relay on its own (worker.boundary.relay): it names the caller by the process that holds
the other end of the connection, never by what the request says, runs `ib` as that agent from its
worktree, and refuses processes that belong to no agent."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from bus.keys import Keys
from tests.cli import IB, IbRunner
from tests.streams import stream_entries
from worker.boundary.relay import Relay
from worker.boundary.relay_wire import Reply, Request, decode_reply, encode_request

SEND = """import socket, sys
from worker.boundary.relay_wire import Request, encode_request
port, cwd, *argv = sys.argv[1:]
with socket.create_connection(("127.0.0.1", int(port))) as s:
    s.sendall(encode_request(Request(tuple(argv), cwd)))
    sys.stdout.buffer.write(s.makefile("rb").readline())
"""
"""A process that asks the relay directly (in an agent, Claude Code's proxy holds this socket)."""


@pytest.fixture
def relay() -> Iterator[Relay]:
    server = Relay(str(IB), 0)
    server.start()
    yield server
    server.close()


def _ask(relay: Relay, ib: IbRunner, cwd: Path, *argv: str, agent: str | None) -> Reply:
    env = {k: v for k, v in ib.environ(None).items() if not k.startswith("IB_AGENT")}
    if agent:
        worktree = ib.cwd / ".ib" / "agents" / agent / "repo"
        env.update({"IB_AGENT_ID": agent, "IB_AGENT_ROLE": "worker", "IB_AGENT_WORKTREE": str(worktree)})
    done = subprocess.run(
        [sys.executable, "-c", SEND, str(relay.address[1]), str(cwd), *argv],
        env=env,
        capture_output=True,
        check=True,
    )
    return decode_reply(done.stdout)


def test_an_agents_process_runs_ib_as_that_agent(
    relay: Relay, ib: IbRunner, repo: Path, rds: redis.Redis, keys: Keys
) -> None:
    wt = repo / ".ib" / "agents" / "a1" / "repo"
    wt.mkdir(parents=True)
    done = _ask(relay, ib, wt, "notify", "from-the-relay", agent="a1")
    assert done.code == 0, done.stderr
    entries = [json.loads(fields["e"]) for _, fields in stream_entries(rds, keys.events)]
    assert [(e["from"], e["msg"]) for e in entries] == [("a1", "from-the-relay")]
    forged = _ask(relay, ib, wt, "notify", "--from", "victim", "forged", agent="a1")
    assert forged.code == 1 and b"agent a1 may not notify as 'victim' (only as itself)" in forged.stderr
    setup = _ask(relay, ib, wt, "hooks", "install", agent="a1")
    assert setup.code == 1 and b"changes the person's own set-up" in setup.stderr
    elsewhere = _ask(relay, ib, repo, "notify", "x", agent="a1")
    assert elsewhere.code == 1 and elsewhere.stderr.startswith(
        b"ib notify: error: agent a1 runs ib only inside"
    )
    assert len(stream_entries(rds, keys.events)) == 1


def test_a_process_of_no_agent_is_refused(relay: Relay, ib: IbRunner, repo: Path) -> None:
    done = _ask(relay, ib, repo, "notify", "x", agent=None)
    assert (done.code, done.stderr) == (1, b"ib: error: the relay serves agents' sandboxed commands only\n")


def test_a_line_that_is_no_request_gets_one_line(relay: Relay, ib: IbRunner, repo: Path) -> None:
    script = SEND.replace("encode_request(Request(tuple(argv), cwd))", "b'nonsense\\n'")
    env = {**ib.environ(None), "IB_AGENT_ID": "a1", "IB_AGENT_WORKTREE": str(repo)}
    done = subprocess.run(
        [sys.executable, "-c", script, str(relay.address[1]), str(repo), "x"],
        env=env,
        capture_output=True,
        check=True,
    )
    reply = decode_reply(done.stdout)
    assert reply.code == 2 and reply.stderr.startswith(b"ib: error: the relay got no command (not JSON")
    assert encode_request(Request(("x",), "/")).endswith(b"\n")
