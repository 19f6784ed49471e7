"""`ib` inside ittybus's bubblewrap box (Gemini CLI's), whose pane has no bus address: every `ib`, hooks
included, dials the worker's relay itself, which names the agent by the box's bwrap process the spawn
started (not by anything a process in the box says) and runs the command outside with the worker's own
bus URL; with no relay, a hook says so in one line and exits 0 at once."""

from __future__ import annotations

import json
import os
import shlex
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from bus.connection.embedded import Embedded
from bus.settings.relay_port import RELAY_QUEUE, VIA_RELAY
from bus.stores.agent_store import Agent, AgentStore
from bus.wire.keys import Keys
from tests.bot_process import worker_running
from tests.cli import IB, IbRunner
from tests.integration.test_relay import SEND
from tests.streams import stream_entries
from tests.waiting import retry_until
from worker.boundary.relay import Relay, caller_of_peer
from worker.boundary.relay_wire import Request, decode_reply, encode_request
from worker.programs.bubblewrap import box, bubblewrap_problem
from worker.programs.confinement import Confinement

AGENT, SIBLING = "a1", "b2"
PERMISSION = {
    "hook_event_name": "Notification",
    "notification_type": "ToolPermission",
    "message": "Allow execution of [Shell]?",
    "details": {"type": "exec", "command": "touch x", "title": "Shell"},
    "session_id": "s1",
    "timestamp": "2026-11-27T05:00:00Z",
}
"""The payload Gemini CLI 0.61.0 gives its Notification hook when its shell dialog opens."""


@pytest.fixture
def relay(redis_url: str) -> Iterator[Relay]:
    """The relay as the worker opens it: with the worker's own bus URL, which the box never holds."""
    server = Relay(str(IB), 0, redis_url)
    server.start()
    yield server
    server.close()


def _worktree(repo: Path, agent: str) -> Path:
    worktree = repo / ".ib" / "agents" / agent / "repo"
    worktree.mkdir(parents=True, exist_ok=True)
    return worktree


def _box_command(
    ib: IbRunner, repo: Path, relay: str, words: list[str], env: dict[str, str], queue: Path | None = None
) -> list[str]:
    """`words` in agent a1's box, started as the spawn starts a Gemini CLI pane: `env -i` with the agent's
    `IB_*` (no IB_REDIS_URL, the relay mark; the hooks' queue, given one) around bwrap; `env` is what the
    command inside adds."""
    assert bubblewrap_problem() is None, bubblewrap_problem()
    worktree = _worktree(repo, AGENT)
    pane = {
        "IB_AGENT_ID": AGENT,
        "IB_AGENT_ROLE": "worker",
        "IB_ROOT": str(repo),
        "IB_AGENT_WORKTREE": str(worktree),
        "IB_NAMESPACE": ib.env.get("IB_NAMESPACE", "ib:"),
        "IB_SPOOL_DIR": ib.env["IB_SPOOL_DIR"],
        "IB_RELAY": relay,
        VIA_RELAY: "1",
        "PATH": f"{Path(IB).parent}:/usr/bin:/bin",
    } | ({RELAY_QUEUE: str(queue)} if queue else {})
    confinement = Confinement(str(worktree), str(repo), (), str(IB), queue=str(queue or ""))
    inside = ["/usr/bin/env", *(f"{k}={v}" for k, v in env.items()), *words]
    command = ["/usr/bin/env", "-i", *(f"{k}={v}" for k, v in pane.items())]
    return command + box(confinement, [], "/nonexistent-home", inside)


def _boxed(
    ib: IbRunner, repo: Path, relay: str, words: list[str], **env: str
) -> subprocess.CompletedProcess[str]:
    """`words` run in the box (`_box_command`), Gemini CLI's permission payload on its stdin."""
    return _run_boxed(_box_command(ib, repo, relay, words, env))


def _run_boxed(command: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        command,
        input=json.dumps(PERMISSION),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def _events(rds: redis.Redis, keys: Keys) -> list[dict[str, object]]:
    return [json.loads(fields["e"]) for _, fields in stream_entries(rds, keys.events)]


def test_a_boxed_hook_reaches_the_bus_through_the_relay(
    ib: IbRunner, repo: Path, relay: Relay, rds: redis.Redis, keys: Keys
) -> None:
    """`ib hook gemini` in the box, its payload on stdin: the relay runs it, the permission event is on the
    bus, although nothing in the box knows where the bus is."""
    rds.hset(keys.agent(AGENT), mapping={"state": "running", "project": "repo"})  # as the spawn records it
    listing = _boxed(ib, repo, _address(relay), ["sh", "-c", "env; cat /proc/*/environ | tr '\\0' '\\n'"])
    assert "IB_REDIS_URL" not in listing.stdout and "IB_AGENT_ID=a1" in listing.stdout
    done = _boxed(ib, repo, _address(relay), [str(IB), "hook", "gemini"])
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    asked = [e for e in _events(rds, keys) if e["type"] == "permission"]
    assert [(e["agent"], e["data"]["detail"]) for e in asked] == [(AGENT, "touch x")]  # type: ignore[index]


def test_with_the_embedded_bus_a_boxed_hook_reaches_it_through_the_relay(repo: Path, tmp_path: Path) -> None:
    """No IB_REDIS_URL anywhere: the box hides `.ib/`, where the embedded bus lives; the relay's `ib` runs
    outside, in the agent's worktree, and finds it there."""
    local = IbRunner(repo, {"IB_SPOOL_DIR": str(tmp_path / "spool"), "IB_NAMESPACE": "ibtest:box:"})
    server = Relay(str(IB), 0, None)
    server.start()
    try:
        assert local.run("bus", "start").returncode == 0
        assert local.run("notify", "the bus is up").returncode == 0
        bus = redis.Redis.from_url(
            (repo / ".ib" / "redis" / "url").read_text().strip(), decode_responses=True
        )
        keys = Keys("ibtest:box:")
        bus.hset(keys.agent(AGENT), mapping={"state": "running", "project": "repo"})
        done = _boxed(local, repo, _address(server), [str(IB), "hook", "gemini"])
        assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
        asked = [e for e in _events(bus, keys) if e["type"] == "permission"]
        assert [e["agent"] for e in asked] == [AGENT]
        bus.close()
    finally:
        server.close()
        Embedded(str(repo)).stop()


def test_a_process_in_the_box_that_names_a_sibling_is_still_its_own_agent(
    ib: IbRunner, repo: Path, relay: Relay, rds: redis.Redis, keys: Keys
) -> None:
    """A command of agent a1 sets IB_AGENT_ID=b2 (and b2's worktree) and asks the relay itself: the relay
    reads the box's bwrap process, so it is a1, with a1's rights; its own `ib` is a1 too."""
    sibling = _worktree(repo, SIBLING)
    forged = {"IB_AGENT_ID": SIBLING, "IB_AGENT_WORKTREE": str(sibling), "IB_RELAYED": "1"}
    cwd = str(_worktree(repo, AGENT))
    ask = [sys.executable, "-c", SEND, str(relay.address[1]), cwd, "notify", "raw"]
    reply = decode_reply(_boxed(ib, repo, _address(relay), ask, **forged).stdout.encode())
    assert reply.code == 0, reply.stderr
    as_sibling = [sys.executable, "-c", SEND, str(relay.address[1]), cwd, "notify", "--from", SIBLING, "x"]
    refused = decode_reply(_boxed(ib, repo, _address(relay), as_sibling, **forged).stdout.encode())
    assert refused.code == 1 and b"agent a1 may not notify as 'b2' (only as itself)" in refused.stderr
    in_sibling = [sys.executable, "-c", SEND, str(relay.address[1]), str(sibling), "notify", "y"]
    elsewhere = decode_reply(_boxed(ib, repo, _address(relay), in_sibling, **forged).stdout.encode())
    assert elsewhere.code == 1 and b"agent a1 runs ib only inside" in elsewhere.stderr
    own = _boxed(ib, repo, _address(relay), [str(IB), "notify", "own"], **forged)
    assert own.returncode == 0, own.stderr
    assert [(e["from"], e["msg"]) for e in _events(rds, keys)] == [(AGENT, "raw"), (AGENT, "own")]


def test_the_relay_names_the_box_by_its_bwrap_process(ib: IbRunner, repo: Path) -> None:
    """The peer of a connection from the box, looked up as the relay does it: the agent the box's bwrap
    process names, whatever the connecting process put in its own environment."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        address = listener.getsockname()
        dial = f"import socket; s = socket.create_connection(('127.0.0.1', {address[1]})); s.recv(1)"
        words = [sys.executable, "-c", dial]
        boxed = subprocess.Popen(_box_command(ib, repo, "127.0.0.1:1", words, {"IB_AGENT_ID": SIBLING}))
        try:
            listener.settimeout(60)
            conn, peer = listener.accept()
            with conn:
                caller = caller_of_peer(peer, address)
                assert not isinstance(caller, str), caller
                assert (caller.id, _comm(caller.pid)) == (AGENT, "bwrap")
        finally:
            boxed.wait(30)


def _comm(pid: int) -> str:
    return Path(f"/proc/{pid}/comm").read_text().strip()


def _address(relay: Relay) -> str:
    return f"{relay.address[0]}:{relay.address[1]}"


def test_with_no_relay_a_hook_says_so_and_exits_0(ib: IbRunner, repo: Path) -> None:
    """No worker: the hook must not hold Gemini CLI up nor fail its session; the pane watcher follows."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed = f"127.0.0.1:{probe.getsockname()[1]}"
    done = _boxed(ib, repo, closed, [str(IB), "hook", "gemini"])
    assert (done.returncode, done.stdout) == (0, "")
    assert done.stderr.startswith("ib hook gemini: error: cannot reach the worker's relay"), done.stderr
    assert "Connection refused" in done.stderr and len(done.stderr.splitlines()) == 1


def test_a_hook_the_relay_refuses_says_why_and_exits_0(ib: IbRunner, repo: Path, relay: Relay) -> None:
    """Run from outside its worktree, the relay will not run it: Gemini CLI still gets exit 0 (a hook
    never fails the session, nor blocks a tool: Gemini CLI reads exit 2 as a refusal)."""
    done = _boxed(ib, repo, _address(relay), ["sh", "-c", f"cd / && exec {IB} hook gemini"])
    assert (done.returncode, done.stdout) == (0, "")
    assert done.stderr.startswith("ib hook: error: agent a1 runs ib only inside its worktree"), done.stderr


def _closed_address() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return f"127.0.0.1:{probe.getsockname()[1]}"


def test_with_no_worker_a_hook_waits_in_the_agents_queue_and_the_worker_runs_it(
    agents_ib: IbRunner, repo: Path, rds: redis.Redis, keys: Keys, tmp_path: Path
) -> None:
    """No worker, so no relay: the hook leaves its request in the agent's own queue folder and exits 0 at
    once. The worker, once started, runs it as the agent its pane names: the event is on the bus, late
    but not lost, and the queue is empty. What else the agent wrote there is removed, never run."""
    queue = repo / ".ib" / "agents" / AGENT / "relay-queue"
    queue.mkdir(parents=True)
    closed = _closed_address()
    session = f"ib-queue-{AGENT}"  # the agent's pane, as the spawn starts it: its box, here idle
    pane = _box_command(agents_ib, repo, closed, ["sleep", "600"], {}, queue)
    socket_name = agents_ib.env["IB_TMUX_SOCKET"]
    tmux = ["tmux", "-L", socket_name]
    subprocess.run([*tmux, "new-session", "-d", "-s", session, f"exec {shlex.join(pane)}"], check=True)
    worker_id = agents_ib.env["IB_WORKER_ID"]
    AgentStore(rds, keys).save(
        Agent(id=AGENT, goal="wait", state="waiting", session=session, worker=worker_id, program="gemini")
    )

    done = _run_boxed(_box_command(agents_ib, repo, closed, [str(IB), "hook", "gemini"], {}, queue))
    assert (done.returncode, done.stdout) == (0, "")
    assert done.stderr == (
        "ib hook gemini: the worker's relay is not running; "
        "the hook waits in the agent's queue for the worker\n"
    )
    assert len(list(queue.glob("*.req"))) == 1
    assert not [e for e in _events(rds, keys) if e["type"] == "permission"]
    # what else the agent may put in its queue, ahead of the hook: removed unread, never run, never waited on
    secret = tmp_path / "secret"
    secret.write_text("the person's")
    os.mkfifo(queue / f"{1:020d}-1.req")
    (queue / f"{2:020d}-1.req").symlink_to(secret)
    (queue / f"{3:020d}-1.req").mkdir()
    (queue / f"{4:020d}-1.req").write_bytes(b"not json\n")
    worktree = str(_worktree(repo, AGENT))
    (queue / f"{5:020d}-1.req").write_bytes(encode_request(Request(("notify", "not a hook"), worktree)))

    with worker_running(agents_ib, tmp_path / "worker.log", rds, keys):
        asked = retry_until(
            lambda: [e for e in _events(rds, keys) if e["type"] == "permission"],
            30,
            0.1,
            "the queued hook run",
        )
        assert [(e["agent"], e["data"]["detail"]) for e in asked] == [(AGENT, "touch x")]  # type: ignore[index]
        retry_until(lambda: not list(queue.iterdir()), 10, 0.1, "the queue emptied")
    assert not [e for e in _events(rds, keys) if "not a hook" in str(e.get("msg"))]
    assert secret.read_text() == "the person's"


def test_a_hook_the_agents_full_queue_cannot_take_says_so_and_exits_0(ib: IbRunner, repo: Path) -> None:
    queue = repo / ".ib" / "agents" / AGENT / "relay-queue"
    queue.mkdir(parents=True)
    for n in range(500):
        (queue / f"{n:020d}-1.req").write_text("{}")
    done = _run_boxed(_box_command(ib, repo, _closed_address(), [str(IB), "hook", "gemini"], {}, queue))
    assert (done.returncode, done.stdout) == (0, "")
    said = done.stderr.splitlines()
    assert said[0] == f"ib hook: the agent's queue cannot take the hook: {queue} holds 500 hooks already"
    assert said[1].startswith("ib hook gemini: error: cannot reach the worker's relay")
    assert len(list(queue.iterdir())) == 500
