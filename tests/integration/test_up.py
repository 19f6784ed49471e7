"""`ib up` for real: the embedded bus, the worker under a supervisor and the dashboard in a terminal (a tmux
pane of the test's own, 80×24), fake agents on the test's agent tmux server; `ib ps`, `ib down`, restarts."""

from __future__ import annotations

import json
import os
import shlex
import signal
import socket
import subprocess
import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import redis

from bus.connection.embedded import Embedded
from bus.wire.keys import Keys
from tests.cli import IB, IbRunner
from tests.waiting import retry_until

SCRIPT = "\n".join(["Paint the shed.", "fake: ask What colour should the shed be?", "fake: wait"])


@dataclass
class Screen:
    """A terminal: sessions on a tmux server of the test's own, each running one command."""

    socket: str
    env: dict[str, str]
    cwd: Path

    def tmux(self, *args: str) -> str:
        done = subprocess.run(
            ["tmux", "-L", self.socket, "-f", "/dev/null", *args],
            capture_output=True,
            text=True,
            env=self.env,
            check=True,
        )
        return done.stdout

    def start(self, name: str, *args: str) -> None:
        # the shell stays after ib exits, so what it printed last can still be read
        command = shlex.join([IB, *args]) + "; echo IB-EXITED-$?; sleep 600"
        self.tmux("new-session", "-d", "-x", "80", "-y", "24", "-s", name, "-c", str(self.cwd), command)

    def text(self, name: str) -> str:
        return self.tmux("capture-pane", "-p", "-t", f"={name}:")

    def keys(self, name: str, *keys: str) -> None:
        self.tmux("send-keys", "-t", f"={name}:", *keys)

    def type(self, name: str, text: str) -> None:
        self.tmux("send-keys", "-t", f"={name}:", "-l", text)


@pytest.fixture
def local(agents_ib: IbRunner, repo: Path) -> Iterator[IbRunner]:
    """`ib` with fake agents on the repository's embedded bus (no IB_REDIS_URL)."""
    runner = IbRunner(repo, {k: v for k, v in agents_ib.env.items() if k != "IB_REDIS_URL"})
    yield runner
    runner.run("down", timeout=60)
    Embedded(str(repo)).stop()


@pytest.fixture
def screen(local: IbRunner, repo: Path) -> Iterator[Screen]:
    term = Screen(f"ibui-{uuid.uuid4().hex[:10]}", local.environ(), repo)
    yield term
    subprocess.run(["tmux", "-L", term.socket, "kill-server"], capture_output=True, check=False)
    (Path(f"/tmp/tmux-{os.getuid()}") / term.socket).unlink(missing_ok=True)


def ps(ib: IbRunner) -> dict[str, Any]:
    done = ib.run("ps", "--json")
    assert done.returncode in (0, 3), done.stderr
    body: dict[str, Any] = json.loads(done.stdout)
    return body


def worker_of(ib: IbRunner) -> dict[str, Any]:
    worker: dict[str, Any] = next(s for s in ps(ib)["services"] if s["name"] == "worker")
    return worker


def ps_now(ib: IbRunner) -> dict[str, Any]:
    """`ib ps --json` as it reads now, {} when it fails this time (for `retry_until` checks)."""
    done = ib.run("ps", "--json")
    try:
        body = json.loads(done.stdout) if done.returncode in (0, 3) else {}
    except ValueError:
        return {}
    return body if isinstance(body, dict) else {}


def worker_now(ib: IbRunner) -> dict[str, Any]:
    body = ps_now(ib)
    worker: dict[str, Any] = next((s for s in body.get("services", []) if s.get("name") == "worker"), {})
    return worker


def healthy_worker(ib: IbRunner, restarts: int = 0) -> dict[str, Any]:
    """The worker's entry in `ib ps --json` once it runs, heartbeat and all, after `restarts`; else {}."""
    body = ps_now(ib)
    worker: dict[str, Any] = next((s for s in body.get("services", []) if s.get("name") == "worker"), {})
    ok = body.get("running") and worker.get("health") == "ok" and worker.get("restarts") == restarts
    return worker if ok else {}


def crashed(ib: IbRunner, restarts: int) -> dict[str, Any]:
    worker = worker_now(ib)
    return worker if worker.get("restarts") == restarts else {}


def agent(ib: IbRunner, agent_id: str) -> dict[str, Any]:
    agents: list[dict[str, Any]] = json.loads(ib.run("list", "--json").stdout)
    return next(a for a in agents if a["id"] == agent_id)


def gone(pid: int) -> bool:
    return not Path(f"/proc/{pid}").exists() or Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z"


def test_up_dashboard_answer_ctrl_c_and_readopt(
    local: IbRunner, screen: Screen, repo: Path, tmp_path: Path, tmux_socket: str
) -> None:
    screen.start("up", "up")
    first = retry_until(lambda: healthy_worker(local), timeout=30, what="a healthy worker in ib ps")
    assert ps(local)["bus"] is True
    assert "IB_TELEGRAM_TOKEN" in next(s for s in ps(local)["services"] if s["name"] == "bot")["note"]
    retry_until(lambda: "bot off" in screen.text("up"), what="the services line on the dashboard")

    spawned = local.run("new-agent", SCRIPT, "--name", "painter")
    assert spawned.returncode == 0, spawned.stderr

    # a capture can land in the middle of a redraw: wait for one whole frame that shows it all
    def whole_frame() -> str:
        text = screen.text("up")
        wanted = ("painter", "QUESTIONS 1", "What colour should the shed be?")
        return text if all(w in text for w in wanted) else ""

    board = retry_until(whole_frame, what="the agent and its question on screen")
    assert len(board.splitlines()) <= 24 and all(len(line) <= 80 for line in board.splitlines())

    screen.keys("up", "a")
    retry_until(lambda: "answer q-" in screen.text("up"), what="the answer prompt")
    screen.type("up", "Blue, with white trim")
    screen.keys("up", "Enter")
    received = tmp_path / "received.txt"
    retry_until(
        lambda: received.exists() and "Blue, with white trim" in received.read_text(), what="the answer"
    )
    retry_until(lambda: "answered q-" in screen.text("up"), what="the confirmation")
    assert json.loads(local.run("questions", "--json").stdout) == []

    screen.keys("up", "C-c")
    retry_until(lambda: "IB-EXITED-0" in screen.text("up"), timeout=30, what="ib up to stop")
    assert "stopped worker; 1 agent keeps running in tmux" in " ".join(screen.text("up").split())
    assert ps(local)["running"] is False
    assert worker_of(local)["state"] == "stopped" and gone(first["pid"])
    session = agent(local, "painter")["session"]
    alive = subprocess.run(["tmux", "-L", tmux_socket, "has-session", "-t", f"={session}"], check=False)
    assert alive.returncode == 0  # the agent kept running

    screen.start("again", "up")
    second = retry_until(lambda: healthy_worker(local), timeout=30, what="the worker again")
    assert second["pid"] != first["pid"]
    retry_until(lambda: "painter" in screen.text("again"), what="the agent on the new dashboard")
    worker_log = repo / ".ib" / "logs" / "worker.log"  # the dashboard reads Redis: it may show painter first
    retry_until(
        lambda: "re-adopted agent painter" in worker_log.read_text(), what="the worker adopting painter"
    )
    assert agent(local, "painter")["state"] not in ("stopped", "")
    screen.keys("again", "q")
    retry_until(lambda: "IB-EXITED-0" in screen.text("again"), timeout=30, what="q to stop ib up")


def test_detach_ps_restart_with_backoff_and_down(local: IbRunner, repo: Path) -> None:
    up = local.run("up", "--detach")
    assert up.returncode == 0, up.stderr
    assert up.stdout.startswith("starting ittybus in the background")  # at once, before the wait
    assert "ib down" in up.stdout and "worker: pid" in up.stdout
    first = retry_until(lambda: healthy_worker(local), timeout=30, what="a healthy worker")
    table = local.run("ps")
    assert table.returncode == 0 and "in the background" in table.stdout
    assert f"worker   {first['pid']}" in table.stdout

    twice = local.run("up", "--detach")
    assert twice.returncode == 1 and "already running" in twice.stderr

    os.kill(first["pid"], signal.SIGKILL)
    second = retry_until(lambda: healthy_worker(local, restarts=1), timeout=30, what="a restart")
    assert second["pid"] != first["pid"] and second["last_exit"] == -9
    assert "killed by SIGKILL" in local.run("ps").stdout
    os.kill(second["pid"], signal.SIGKILL)
    retry_until(lambda: crashed(local, 2), what="the second crash")
    retry_until(lambda: healthy_worker(local, restarts=2), timeout=30, what="the second restart")
    # the second crash in a row waits twice as long (the log, not `ib ps`: a slow poll can miss the wait)
    log = (repo / ".ib" / "logs" / "stack.log").read_text()
    assert "ended: killed by SIGKILL; restart 1 in 1s" in log
    assert "ended: killed by SIGKILL; restart 2 in 2s" in log

    pid = worker_of(local)["pid"]
    down = local.run("down", timeout=60)
    assert down.returncode == 0, down.stderr
    assert "stopped worker" in down.stdout
    assert "keep" not in down.stdout + down.stderr  # no agent runs: none is said to keep running
    assert local.run("ps").returncode == 3
    retry_until(lambda: gone(pid), what="the worker to exit")
    assert local.run("down").stdout.strip() == "ittybus is not running here (`ib up` starts it)"


def test_watch_prints_plain_snapshots_when_not_a_terminal(agents_ib: IbRunner) -> None:
    ib = agents_ib
    assert ib.run("new-agent", SCRIPT, "--name", "painter").returncode == 0
    watch = ib.popen("watch")
    out: list[str] = []
    assert watch.stdout is not None
    lines = watch.stdout
    threading.Thread(target=lambda: out.extend(iter(lines.readline, "")), daemon=True).start()
    try:
        retry_until(
            lambda: "What colour should the shed be?" in "".join(out), what="the question in a snapshot"
        )
        assert ib.run("notify", "--type", "complete", "painted it").returncode == 0
        retry_until(lambda: "painted it" in "".join(out), what="a new snapshot for the event")
    finally:
        watch.send_signal(signal.SIGINT)
        watch.wait(timeout=10)
    text = "".join(out)
    assert "\x1b" not in text and "ittybus · repo" in text
    assert text.count("ittybus · repo") >= 2  # one snapshot per change


def test_a_killed_supervisor_leaves_nothing_behind(local: IbRunner) -> None:
    assert local.run("up", "--detach").returncode == 0
    worker = retry_until(lambda: healthy_worker(local), timeout=30, what="a healthy worker")
    os.kill(ps(local)["supervisor"], signal.SIGKILL)
    retry_until(lambda: ps_now(local).get("running") is False, what="ps to see the supervisor gone")
    left = local.run("ps")
    assert left.returncode == 3
    assert f"worker (pid {worker['pid']}) was left running" in left.stdout

    again = local.run("up", "--detach")  # stops the leftover before it starts its own
    assert again.returncode == 0, again.stderr
    retry_until(lambda: gone(worker["pid"]), what="the leftover worker to be stopped")
    assert healthy_worker(local) or retry_until(
        lambda: healthy_worker(local), timeout=30, what="the new worker"
    )


def test_up_refuses_when_a_worker_of_that_name_runs(local: IbRunner, repo: Path) -> None:
    assert local.run("bus", "start").returncode == 0  # a worker alone makes no bus (only up and bus start do)
    worker = local.popen("worker")
    try:
        url = retry_until(lambda: Embedded(str(repo)).alive() or "", what="the embedded bus")
        client = redis.Redis.from_url(url, decode_responses=True)
        heartbeat = Keys(local.env["IB_NAMESPACE"]).worker(local.env["IB_WORKER_ID"])
        retry_until(lambda: client.exists(heartbeat), 30, what="the standalone worker's heartbeat")
        refused = local.run("up", "--detach")
        assert refused.returncode == 1
        assert f"a worker named {local.env['IB_WORKER_ID']!r} is already running" in refused.stderr
        assert ps(local)["running"] is False
    finally:
        worker.terminate()
        worker.wait(timeout=30)


def test_ps_says_no_bus_while_the_bus_is_stopped_and_ok_once_it_is_back(local: IbRunner) -> None:
    assert local.run("up", "--detach").returncode == 0
    retry_until(lambda: healthy_worker(local), timeout=30, what="a healthy worker")
    assert local.run("bus", "stop").returncode == 0
    body = ps(local)
    assert body["bus"] is False and worker_of(local)["health"] == "no bus"
    assert "no bus" in local.run("ps").stdout
    assert local.run("bus", "start").returncode == 0
    retry_until(lambda: healthy_worker(local), timeout=30, what="the worker back on the restarted bus")


def test_a_worker_follows_the_embedded_bus_to_a_new_port(local: IbRunner, repo: Path) -> None:
    """`ib bus start` finds the old port taken: the bus moves, the worker (whose clients look at the old
    address) stops with one line, and `ib up` starts it again at the new address."""
    assert local.run("up", "--detach").returncode == 0
    first = retry_until(lambda: healthy_worker(local), timeout=30, what="a healthy worker")
    url_file = repo / ".ib" / "redis" / "url"
    old = urlsplit(url_file.read_text().strip())
    assert local.run("bus", "stop").returncode == 0
    with socket.socket() as squatter:
        squatter.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # the worker's old connections linger
        squatter.bind(("127.0.0.1", old.port or 0))
        squatter.listen()
        assert local.run("bus", "start").returncode == 0
        assert urlsplit(url_file.read_text().strip()).port != old.port
        second = retry_until(
            lambda: healthy_worker(local, restarts=1), timeout=60, what="the worker on the moved bus"
        )
    assert second["pid"] != first["pid"] and second["last_exit"] == 1
    log = (repo / ".ib" / "logs" / "worker.log").read_text()
    assert "the embedded bus now listens at redis://***@127.0.0.1:" in log
    assert old.password and old.password not in log
