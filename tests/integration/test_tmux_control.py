"""worker.tmux.control against a real tmux server on a socket of its own: a control client's replies equal
what a tmux process prints (escapes, odd characters, lines that look like its framing, errors), calls
from many threads each get their own reply, a server killed and started again is found again, and the
client leaves no session or client behind however its process ends."""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.waiting import retry_until
from worker.errors import SessionGone
from worker.secret_env import without_secrets
from worker.tmux.client import Tmux
from worker.tmux.control import RETRY, ControlClient
from worker.tmux.control_mode import SESSION_PREFIX
from worker.tmux.parse import PANES_FORMAT, command_line
from worker.tmux.server import TmuxServer

ODD = "odd"
# what the session's program prints: colours, a tab, the field separator, wide and combining characters,
# a backslash, and whole lines that look like the control client's framing and notifications
SCREEN = (
    b"\x1b[1;31mred\x1b[0m plain\tTab\x1fsep\n"
    b"\xc3\xa9 e\xcc\x81 \xf0\x9f\x92\xa5 \\ back\\slash 'quote' \"dq\" ; #{pane_id} ~\n"
    b"%begin 1795973628 266 1\n%end 1795973628 266 1\n%error 1 2 1\n%exit\n%output %1 x\n"
    b"\x1b[7mreverse\x1b[0m DONE\n"
)
READS = {
    "capture": [["capture-pane", "-p", "-t", f"={ODD}:"]],
    "capture-escapes": [["capture-pane", "-e", "-p", "-t", f"={ODD}:"]],
    "capture-history-joined": [["capture-pane", "-e", "-p", "-J", "-S", "-", "-t", f"={ODD}:"]],
    "list-sessions": [["list-sessions", "-F", "#{session_name} #{session_windows}"]],
    "list-panes": [["list-panes", "-a", "-F", PANES_FORMAT]],
    "screen": [
        ["has-session", "-t", f"={ODD}"],
        ["display-message", "-p", "-t", f"={ODD}:", "#{pane_width} #{pane_height}"],
        ["capture-pane", "-e", "-p", "-t", f"={ODD}:"],
    ],
    "display-missing-target": [["display-message", "-p", "-t", "=nope:", "#{session_name} #{pane_id} x"]],
    "quoted-format": [["display-message", "-p", "-t", f"={ODD}:", "it's; #{session_name} $HOME ~ {"]],
}


def _tmux(socket: str, *commands: list[str]) -> subprocess.CompletedProcess[bytes]:
    """A tmux process, as worker.tmux.server runs one."""
    return subprocess.run(
        ["tmux", "-u", "-L", socket, *command_line(*commands)], capture_output=True, check=False
    )


def _sessions(socket: str) -> list[str]:
    return _tmux(socket, ["list-sessions", "-F", "#{session_name}"]).stdout.decode().split()


def _control_sessions(socket: str) -> list[str]:
    return [name for name in _sessions(socket) if name.startswith(SESSION_PREFIX)]


def _clients(socket: str) -> list[str]:
    return _tmux(socket, ["list-clients", "-F", "#{client_name}"]).stdout.decode().split()


def _start_odd(socket: str) -> None:
    program = f"import sys, time; sys.stdout.buffer.write({SCREEN!r}); sys.stdout.flush(); time.sleep(600)"
    Tmux(socket, config_file="/dev/null").new_session(
        ODD, "/", shlex.join([sys.executable, "-c", program]), {}
    )
    retry_until(lambda: b"DONE" in _tmux(socket, ["capture-pane", "-p", "-t", f"={ODD}:"]).stdout)


@pytest.fixture
def odd(tmux_socket: str) -> str:
    """The test's tmux server with one session showing SCREEN."""
    _start_odd(tmux_socket)
    return tmux_socket


@pytest.fixture
def control(odd: str) -> Iterator[ControlClient]:
    client = ControlClient(TmuxServer(odd).base, without_secrets(os.environ))
    assert client.run(READS["list-sessions"], timeout=10) is not None  # started
    panes = ["list-panes", "-t", f"={client.session}:", "-F", "#{pane_current_command}"]
    retry_until(lambda: _tmux(odd, panes).stdout == b"sh\n", what="its pane past the printf, as it stays")
    yield client
    client.close()
    retry_until(lambda: not _control_sessions(odd), what="the control client's session destroyed")


@pytest.mark.parametrize("commands", READS.values(), ids=READS.keys())
def test_reply_is_what_a_tmux_process_prints(
    odd: str, control: ControlClient, commands: list[list[str]]
) -> None:
    reply = control.run(commands, timeout=10)
    assert reply is not None and reply.ok
    assert reply.text == _tmux(odd, *commands).stdout.decode("utf-8", "replace")


def test_reply_to_a_failing_command_is_its_error(odd: str, control: ControlClient) -> None:
    commands = [["has-session", "-t", "=nope"], ["capture-pane", "-p", "-t", f"={ODD}:"]]
    reply = control.run(commands, timeout=10)
    plain = _tmux(odd, *commands)
    assert reply is not None and not reply.ok and plain.returncode == 1
    assert reply.text == plain.stderr.decode() == "can't find session: nope\n"
    after = control.run(READS["capture"], timeout=10)  # the skipped command leaves no reply behind
    assert after is not None and after.text == _tmux(odd, *READS["capture"]).stdout.decode()


def test_what_is_not_a_read_is_left_to_a_tmux_process(odd: str) -> None:
    control = ControlClient(TmuxServer(odd).base, without_secrets(os.environ))
    assert control.run([["send-keys", "-t", f"={ODD}:", "x"]], timeout=10) is None
    assert control.run([["display-message", "-p", "-t", f"={ODD}:", "two\nlines"]], timeout=10) is None
    assert not _control_sessions(odd)  # nothing it would run: no client started


def test_a_closed_client_runs_nothing(odd: str, control: ControlClient) -> None:
    control.close()
    assert control.run(READS["capture"], timeout=10) is None
    retry_until(lambda: not _control_sessions(odd), what="the control client's session destroyed")


def test_a_forked_child_leaves_the_client_to_its_parent(odd: str, control: ControlClient) -> None:
    child = os.fork()
    if child == 0:  # the child's reads would interleave with the parent's on the same pipes
        os._exit(0 if control.run(READS["capture"], timeout=10) is None else 1)
    assert os.waitpid(child, 0)[1] == 0
    reply = control.run(READS["capture"], timeout=10)
    assert reply is not None and reply.text == _tmux(odd, *READS["capture"]).stdout.decode()


def test_concurrent_calls_each_get_their_reply(odd: str, control: ControlClient) -> None:
    def call(i: int) -> str:
        reply = control.run([["display-message", "-p", "-t", f"={ODD}:", f"call {i} #{{session_name}}"]], 10)
        assert reply is not None
        return reply.text

    with ThreadPoolExecutor(50) as pool:
        assert list(pool.map(call, range(200))) == [f"call {i} {ODD}\n" for i in range(200)]
    assert len(_control_sessions(odd)) == 1


def test_tmux_reads_the_same_through_its_control_client(odd: str) -> None:
    kept, plain = Tmux(odd, config_file="/dev/null"), Tmux(odd, config_file="/dev/null")
    kept.keep_control()
    try:
        assert kept.capture(ODD) == plain.capture(ODD)
        assert kept.capture(ODD, lines=3) == plain.capture(ODD, lines=3)
        assert kept.capture_screen(ODD) == plain.capture_screen(ODD)
        assert kept.pane_pid(ODD) == plain.pane_pid(ODD)
        assert len(_control_sessions(odd)) == 1  # the reads went through it
        assert kept.sessions() == plain.sessions() and ODD in kept.sessions()
        assert [p.session for p in kept.panes()] == [p.session for p in plain.panes()]
        with pytest.raises(SessionGone, match="'nope' is gone"):
            kept.capture("nope")
        assert not kept.has_session("nope")
        kept.send_keys(ODD, "x")  # not a read: a tmux process, as before
    finally:
        kept.close_control()
    retry_until(lambda: not _control_sessions(odd) and not _clients(odd), what="no control client left")


def test_a_server_killed_and_started_again_is_found_again(tmux_socket: str) -> None:
    tmux = Tmux(tmux_socket, config_file="/dev/null")
    tmux.keep_control()
    try:
        assert tmux.sessions() == []  # no server: a tmux process said so, and none was started
        assert _tmux(tmux_socket, ["list-sessions"]).returncode == 1
        _start_odd(tmux_socket)
        retry_until(lambda: ODD in tmux.sessions() and _control_sessions(tmux_socket), timeout=RETRY + 10)
        _tmux(tmux_socket, ["kill-server"])
        assert tmux.sessions() == []
        with pytest.raises(SessionGone, match="not running"):
            tmux.capture(ODD)
        _start_odd(tmux_socket)
        retry_until(lambda: ODD in tmux.sessions() and _control_sessions(tmux_socket), timeout=RETRY + 10)
        assert tmux.capture(ODD) == Tmux(tmux_socket).capture(ODD)
    finally:
        tmux.close_control()
    retry_until(lambda: not _control_sessions(tmux_socket), what="the control client's session destroyed")


def test_a_call_in_flight_when_the_server_dies_runs_in_a_tmux_process(odd: str) -> None:
    server = TmuxServer(odd)
    server.keep_control()
    try:
        assert server.run(READS["capture"]).stdout
        assert server.control is not None and server.control.session in _control_sessions(odd)
        _tmux(odd, ["kill-session", "-t", f"={server.control.session}"])  # the client leaves with it
        result = server.run(READS["capture"])
        assert "\n".join(result.stdout) == _tmux(odd, *READS["capture"]).stdout.decode().rstrip("\n")
    finally:
        server.close_control()


CHILD = """
import os, signal, sys
from worker.tmux.client import Tmux
tmux = Tmux(sys.argv[1])
tmux.keep_control()
assert "odd" in tmux.sessions()
print("ready", flush=True)
how = sys.argv[2]
if how == "closed":
    tmux.close_control()
elif how == "killed":
    os.kill(os.getpid(), signal.SIGKILL)
"""


@pytest.mark.parametrize("how", ["closed", "exited", "killed"])
def test_the_client_leaves_nothing_when_its_process_ends(odd: str, how: str, tmp_path: Path) -> None:
    child = subprocess.Popen([sys.executable, "-c", CHILD, odd, how], stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None and child.stdout.readline() == "ready\n"
    child.wait(timeout=30)
    assert child.returncode == (-signal.SIGKILL if how == "killed" else 0)
    retry_until(lambda: not _control_sessions(odd) and not _clients(odd), what="no control client left")
    assert _sessions(odd) == [ODD]


def test_the_server_outlives_clients_killed_while_others_come_and_go(odd: str) -> None:
    """A control client's process killed while other tmux clients come and go (a worker killed while the
    person runs `ib`) leaves the server and its sessions running: with `destroy-unattached`, tmux 3.3a
    crashed in 1 kill in 12 beside stress-ng, every session with it."""
    stop = threading.Event()

    def come_and_go() -> None:
        while not stop.is_set():
            _sessions(odd)

    with ThreadPoolExecutor(2) as pool:
        busy = [pool.submit(come_and_go) for _ in range(2)]
        try:
            for _ in range(15):
                child = subprocess.Popen([sys.executable, "-c", CHILD, odd, "killed"], stdout=subprocess.PIPE)
                assert child.stdout is not None and child.stdout.readline() == b"ready\n"
                assert child.wait(timeout=30) == -signal.SIGKILL
                assert ODD in _sessions(odd), "the tmux server died with the killed client"
        finally:
            stop.set()
        for thread in busy:
            thread.result()
    retry_until(lambda: not _control_sessions(odd) and not _clients(odd), what="no control client left")


def test_many_threads_read_through_tmux_while_the_server_is_killed(odd: str) -> None:
    tmux = Tmux(odd, config_file="/dev/null")
    tmux.keep_control()
    failures: list[BaseException] = []

    def read() -> None:
        for _ in range(20):
            try:
                assert [n for n in tmux.sessions() if not n.startswith(SESSION_PREFIX)] in ([], [ODD])
            except BaseException as e:  # collected: a thread's assert would not fail the test
                failures.append(e)

    threads = [threading.Thread(target=read) for _ in range(20)]
    try:
        for thread in threads:
            thread.start()
        _tmux(odd, ["kill-server"])
        for thread in threads:
            thread.join()
    finally:
        tmux.close_control()
    assert failures == []
