"""The warm `ib` (worker.cli.warm): the first command starts the server, the next ones run in a process it
forks, and a person cannot tell the difference: the same output, exit codes, standard input, working
folder and environment as `IB_WARM=0` (every command in its own interpreter); Ctrl-C and SIGTERM reach
the command; a killed `ib` takes its command with it; the server's own environment holds no secret; a
client in another mount namespace (a sandbox) is not served; new code on disk retires the server.

Each test gives the server a runtime folder of its own (XDG_RUNTIME_DIR), so it starts and ends here."""

from __future__ import annotations

import os
import select
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

import worker.cli.warm
from bus.wire.keys import Keys
from tests.cli import IB, IbRunner
from tests.waiting import retry_until
from worker.boundary.identity import parent_of
from worker.cli.warm import wire

WARM_PACKAGE = Path(worker.cli.warm.__file__)


@pytest.fixture
def warm(ib: IbRunner, tmp_path: Path) -> Iterator[IbRunner]:
    """`ib` with a runtime folder of the test's own; its server started and ready, and ended afterwards."""
    run_dir = tmp_path / "run"
    run_dir.mkdir(mode=0o700)
    ib.env["XDG_RUNTIME_DIR"] = str(run_dir)
    assert ib.run("--version").returncode == 0  # served by no one: it starts the server
    retry_until(lambda: _server(run_dir), 60, what="the warm server")
    retry_until(lambda: _served_once(ib, run_dir), 90, 0.5, what="a command served")
    yield ib
    for pid in _servers(run_dir):
        os.kill(pid, signal.SIGTERM)


def _servers(run_dir: Path) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                words = (entry / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if b"worker.cli.warm.server" in words and any(str(run_dir).encode() in w for w in words):
                found.append(int(entry.name))
    return found


def _server(run_dir: Path) -> int | None:
    socket_files = list((run_dir / "ittybus").glob("warm-*.sock"))
    servers = _servers(run_dir)
    return servers[0] if socket_files and servers else None


def _children(pid: int) -> list[int]:
    return [
        int(p.name) for p in Path("/proc").iterdir() if p.name.isdigit() and parent_of(int(p.name)) == pid
    ]


def _served_once(ib: IbRunner, run_dir: Path) -> bool:
    """A long command whose process shows up as the server's child: the server took it. (Another test
    changing a module's time retires every server of this checkout: the next `ib` starts a new one.)"""
    ib.run("--version")
    server = _server(run_dir)
    if server is None:
        return False
    listening = ib.popen("listen", "--timeout", "30", "--name", "probe")
    try:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and listening.poll() is None:
            if _children(server):
                return True
            time.sleep(0.05)
        return False
    finally:
        listening.send_signal(signal.SIGTERM)
        listening.communicate(timeout=30)


def _cold(ib: IbRunner, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return ib.run(*args, stdin=stdin, env={"IB_WARM": "0"})


@pytest.mark.parametrize(
    "args",
    [
        ("--version",),
        ("list",),
        ("send",),  # a usage error: exit 2
        ("send", "ghost", "hello"),  # a refusal: exit 1
        ("task", "list"),
        ("info", "ghost"),
        ("events", "--type", ""),
    ],
    ids=lambda a: "-".join(a) or "none",
)
def test_a_served_command_says_and_exits_as_one_run_alone(warm: IbRunner, args: tuple[str, ...]) -> None:
    served, alone = warm.run(*args), _cold(warm, *args)
    assert (served.returncode, served.stdout, served.stderr) == (alone.returncode, alone.stdout, alone.stderr)


def test_the_command_reads_the_clients_stdin_and_works_in_its_folder(warm: IbRunner, tmp_path: Path) -> None:
    assert warm.run("task", "add", "Write the parser", "--id", "parse", "--project", "p").returncode == 0
    noted = warm.run("task", "observe", "parse", "-", stdin="the grammar is LL(1)\n")
    assert noted.returncode == 0, noted.stderr
    shown = warm.run("task", "show", "parse")
    assert "the grammar is LL(1)" in shown.stdout
    no_bus = IbRunner(warm.cwd, {"XDG_RUNTIME_DIR": warm.env["XDG_RUNTIME_DIR"]})  # the folder decides
    here = no_bus.run("list")
    assert here.returncode == 1 and f"there is no ittybus in {warm.cwd}" in here.stderr
    outside = no_bus.run("list", cwd=tmp_path)
    assert outside.returncode == 1 and "not inside a git repository" in outside.stderr


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_to_ib_reaches_its_command(warm: IbRunner, rds: redis.Redis, keys: Keys, sig: int) -> None:
    """Ctrl-C or SIGTERM to a served `ib listen` ends it as it ends a listener in its own process."""
    outcomes: list[tuple[int, str, str]] = []
    for env in ({}, {"IB_WARM": "0"}):
        name = f"sig{sig}-{len(outcomes)}"
        listening = warm.popen("listen", "--timeout", "60", "--name", name, env=env)
        retry_until(lambda: rds.exists(keys.listener(name)) or listening.poll() is not None, 30, what=name)  # noqa: B023
        listening.send_signal(sig)
        out, err = listening.communicate(timeout=30)
        outcomes.append((listening.returncode, out, err))
        retry_until(lambda: not rds.exists(keys.listener(name)), 30, what=f"{name} gone")  # noqa: B023
    assert outcomes[0] == outcomes[1]


def test_a_killed_ib_takes_its_command_with_it(warm: IbRunner, tmp_path: Path) -> None:
    server = _server(tmp_path / "run")
    assert server is not None
    listening = warm.popen("listen", "--timeout", "120", "--name", "doomed")
    command = retry_until(lambda: _children(server), 30, what="the command's process")[0]
    listening.kill()
    listening.communicate(timeout=30)
    retry_until(
        lambda: not Path(f"/proc/{command}").exists() or _zombie(command), 30, what="the command ended"
    )


def _zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


def test_the_servers_environment_names_no_secret(ib: IbRunner, tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    run_dir.mkdir(mode=0o700)
    ib.env["XDG_RUNTIME_DIR"] = str(run_dir)
    ib.env["IB_BOT_TOKEN"] = "123:token-that-must-not-leak"
    try:
        ib.run("--version")
        server = retry_until(lambda: _server(run_dir), 60, what="the warm server")
        environ = Path(f"/proc/{server}/environ").read_bytes()
        assert b"token-that-must-not-leak" not in environ
        assert ib.env["IB_REDIS_URL"].encode() not in environ
    finally:
        for pid in _servers(run_dir):
            os.kill(pid, signal.SIGTERM)


def test_a_client_in_another_mount_namespace_is_not_served_but_still_answered(
    warm: IbRunner, tmp_path: Path
) -> None:
    """A sandbox is another mount namespace: its `ib` runs in its own process, never in the server's."""
    inside = subprocess.run(
        ["unshare", "--mount", "--", IB, "listen", "--timeout", "1", "--name", "boxed"],
        capture_output=True,
        text=True,
        env=warm.environ(),
        cwd=warm.cwd,
        timeout=60,
        check=False,
    )
    assert inside.returncode == 0, inside.stderr
    log = (tmp_path / "run" / "ittybus" / "warm.log").read_text()
    assert "another mount or pid namespace" in log


def test_new_code_on_disk_retires_the_server(warm: IbRunner, tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    old = _server(run_dir)
    before = os.stat(WARM_PACKAGE)
    try:
        os.utime(WARM_PACKAGE, ns=(before.st_atime_ns, before.st_mtime_ns + 1_000_000_000))
        changed = warm.run("--version")  # the server says it is stale; this command runs on its own
        assert changed.returncode == 0 and "ittybus" in changed.stdout
        retry_until(lambda: old not in _servers(run_dir), 30, what="the old server to end")
    finally:
        os.utime(WARM_PACKAGE, ns=(before.st_atime_ns, before.st_mtime_ns))
    warm.run("--version")  # starts the next one
    retry_until(lambda: (found := _server(run_dir)) and found != old, 60, what="a new server")


@pytest.mark.parametrize(
    "garbage",
    [b"", b"\x00\x00\x00\x05hello", b"\xff\xff\xff\xff" + b"x" * 100, b"GET / HTTP/1.0\r\n\r\n"],
    ids=["nothing", "not-marshal", "too-large", "http"],
)
def test_garbage_on_the_socket_is_dropped_and_the_server_serves_on(
    warm: IbRunner, tmp_path: Path, garbage: bytes
) -> None:
    """A client that sends no request (or not one `ib` makes) gets the connection closed; nothing runs."""
    (address,) = (tmp_path / "run" / "ittybus").glob("warm-*.sock")
    server = _server(tmp_path / "run")
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.settimeout(30)
        conn.connect(str(address))
        conn.sendall(garbage)
        conn.shutdown(socket.SHUT_WR)
        assert conn.recv(64) == b""  # closed without an answer
    assert _server(tmp_path / "run") == server
    served, alone = warm.run("task", "list"), warm.run("task", "list", env={"IB_WARM": "0"})
    assert (served.returncode, served.stdout, served.stderr) == (alone.returncode, alone.stdout, alone.stderr)


@pytest.mark.parametrize("how", ["open-to-others", "another-users"])
def test_a_socket_folder_that_is_not_private_is_never_used(
    ib: IbRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    """Someone else's folder (or one others may write in) could hold a socket that is not ours, waiting
    for our environment and streams: `ib` never connects, starts no server, and runs the command itself."""
    run_dir = tmp_path / "run"
    folder = run_dir / "ittybus"
    folder.mkdir(parents=True, mode=0o700)
    ib.env["XDG_RUNTIME_DIR"] = str(run_dir)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(run_dir))
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as trap:
        trap.bind(wire.address())  # where this installation's server would be
        trap.listen(8)
        trap.setblocking(False)
        if how == "open-to-others":
            folder.chmod(0o777)
        else:
            os.chown(folder, 65534, 65534)  # nobody's
        for _ in range(2):
            done, alone = ib.run("task", "list"), ib.run("task", "list", env={"IB_WARM": "0"})
            said = (done.returncode, done.stdout, done.stderr)
            assert said == (alone.returncode, alone.stdout, alone.stderr)
        with pytest.raises(BlockingIOError):
            trap.accept()  # nobody came
    assert _servers(run_dir) == []


def test_a_request_left_in_the_backlog_of_a_server_that_stopped_runs_alone(
    ib: IbRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A server that stops (its code changed on disk, an idle exit) closes its socket with the requests it
    has not taken yet: their connections are reset, nothing ran, and the command runs alone. `ib approve`
    said "did not say it started it within 120 s" and exited 1 (a full run beside stress-ng, where a test
    made the suite's server stale)."""
    run_dir = tmp_path / "run"
    (run_dir / "ittybus").mkdir(parents=True, mode=0o700)
    ib.env["XDG_RUNTIME_DIR"] = str(run_dir)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(run_dir))
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(wire.address())  # where this installation's server is
    server.listen(8)
    try:
        client = ib.popen("task", "list")
        readable, _, _ = select.select([server], [], [], 30)  # it connected: its request follows at once
        assert readable
        time.sleep(0.5)  # sent, and waiting for the answer in the backlog
        server.close()  # the server stops without taking it
        out, err = client.communicate(timeout=60)
        alone = ib.run("task", "list", env={"IB_WARM": "0"})
        assert (client.returncode, out, err) == (alone.returncode, alone.stdout, alone.stderr)
    finally:
        for pid in _servers(run_dir):  # the one the command started for the next
            os.kill(pid, signal.SIGTERM)
