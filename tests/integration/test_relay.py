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

from bus.wire.keys import Keys
from tests.cli import IB, IbRunner
from tests.streams import stream_entries
from tests.waiting import retry_until
from worker.boundary.relay import Relay
from worker.boundary.relay_wire import Reply, Request, decode_reply, encode_request

SEND = """import socket, sys
from worker.boundary.relay_wire import Chunk, Reply, Request, decode_piece, encode_reply, encode_request
port, cwd, *argv = sys.argv[1:]
out = {"stdout": b"", "stderr": b""}
with socket.create_connection(("127.0.0.1", int(port))) as s:
    s.sendall(encode_request(Request(tuple(argv), cwd)))
    answer = s.makefile("rb")
    while isinstance(piece := decode_piece(answer.readline()), Chunk):
        out[piece.stream] += piece.data
reply = Reply(piece.code, out["stdout"] + piece.stdout, out["stderr"] + piece.stderr)
sys.stdout.buffer.write(encode_reply(reply))
"""
"""A process that asks the relay directly (in an agent, Claude Code's proxy holds this socket), and puts the
output that came on the way and the last line together as one reply."""


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


SLOW_IB = """#!/bin/sh
echo "$$" > pid
echo first
for _ in $(seq 6000); do [ -e go ] && break; sleep 0.1; done
echo second >&2
exit 4
"""
"""What the relay runs in place of `ib` below: output, then more output only once the caller has seen the
first (it makes the file `go`), then an exit code. It runs in the agent's worktree, with the agent's
environment only: the files there are how it and the test speak."""

FOLLOW = """import os, pathlib, socket, sys
from worker.boundary.relay_wire import Request, decode_piece, encode_request
port, cwd = sys.argv[1:]
with socket.create_connection(("127.0.0.1", int(port))) as s:
    s.sendall(encode_request(Request(("look", "--follow"), cwd)))
    answer = s.makefile("rb")
    print(decode_piece(answer.readline()), flush=True)
    if os.environ.get("HANG_UP"):
        sys.exit(0)
    pathlib.Path(cwd, "go").touch()
    print(decode_piece(answer.readline()), flush=True)
    print(decode_piece(answer.readline()), flush=True)
"""
"""An agent's `ib look --follow`: reads what comes, and either lets the command go on or hangs up."""


def _slow_relay(tmp_path: Path) -> Relay:
    script = tmp_path / "slow-ib"
    script.write_text(SLOW_IB)
    script.chmod(0o755)
    server = Relay(str(script), 0)
    server.start()
    return server


def _agent_env(ib: IbRunner, wt: Path, **more: str) -> dict[str, str]:
    env = {k: v for k, v in ib.environ(None).items() if not k.startswith("IB_AGENT")}
    return {**env, "IB_AGENT_ID": "a1", "IB_AGENT_ROLE": "worker", "IB_AGENT_WORKTREE": str(wt), **more}


def _follow(server: Relay, wt: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """The agent's `ib look --follow` (FOLLOW) against `server`, from its worktree."""
    return subprocess.run(
        [sys.executable, "-c", FOLLOW, str(server.address[1]), str(wt)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )


def test_output_comes_as_it_is_printed_then_the_exit_code(ib: IbRunner, repo: Path, tmp_path: Path) -> None:
    """`ib look --follow` through the relay: what it prints reaches the agent at once, not at the end."""
    wt = repo / ".ib" / "agents" / "a1" / "repo"
    wt.mkdir(parents=True)
    server = _slow_relay(tmp_path)
    try:
        done = _follow(server, wt, _agent_env(ib, wt))
    finally:
        server.close()
    first, second, last = done.stdout.splitlines()  # had the first been held back, neither would go on
    assert first == "Chunk(stream='stdout', data=b'first\\n')"
    assert second == "Chunk(stream='stderr', data=b'second\\n')"
    assert last == "Reply(code=4, stdout=b'', stderr=b'')"


def test_a_caller_that_hangs_up_stops_its_command(ib: IbRunner, repo: Path, tmp_path: Path) -> None:
    """The agent's Bash tool gave up (timeout, Esc): the `ib` it ran must not go on forever outside."""
    wt = repo / ".ib" / "agents" / "a1" / "repo"
    wt.mkdir(parents=True)
    server = _slow_relay(tmp_path)
    try:
        done = _follow(server, wt, _agent_env(ib, wt, HANG_UP="1"))
        assert done.stdout.startswith("Chunk(stream='stdout', data=b'first\\n')")
        pid = int((wt / "pid").read_text())
        retry_until(lambda: not Path(f"/proc/{pid}").exists() or _zombie(pid), 30, what="the command stopped")
    finally:
        server.close()


def _zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True
