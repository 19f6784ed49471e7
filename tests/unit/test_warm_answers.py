"""The warm client reads the server's answers one line at a time, and passes on the signals it gets
(worker.cli.warm.client)."""

from __future__ import annotations

import _socket
import signal
import subprocess
import sys

from worker.cli.warm.client import _Forwarding, _line


def test_pid_and_exit_that_arrive_together_are_two_answers() -> None:
    """A quick command's `pid` and `exit` come in one read on a busy machine: the first line alone is the
    start answer (read as one, it was no `pid`, and the client ran the command a second time)."""
    client, server = _socket.socketpair(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        server.sendall(b"pid 4242\nexit 1\n")
        assert _line(client, 1.0) == "pid 4242"
        assert _line(client, 1.0) == "exit 1"
        server.close()
        assert _line(client, 1.0) == ""  # the server went away
    finally:
        client.close()


def test_a_line_in_pieces_is_one_answer() -> None:
    client, server = _socket.socketpair(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        server.sendall(b"pi")
        server.sendall(b"d 7\n")
        assert _line(client, 1.0) == "pid 7"
    finally:
        client.close()
        server.close()


def test_a_signal_before_the_commands_pid_is_known_reaches_the_command() -> None:
    """SIGTERM to `ib` between the request and the server's `pid` answer (the command already printed: the
    caller saw its output) waits for the pid and goes to the command; `ib` itself lives on."""
    before = signal.getsignal(signal.SIGTERM)
    command = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        forwarding = _Forwarding()
        signal.raise_signal(signal.SIGTERM)  # handled at once: this process is still here
        assert command.poll() is None
        forwarding.to(command.pid)
        assert command.wait(timeout=10) == -signal.SIGTERM
        forwarding.cancel()
        assert signal.getsignal(signal.SIGTERM) == before
    finally:
        command.kill()
        command.wait()
