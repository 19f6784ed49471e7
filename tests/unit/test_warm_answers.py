"""The warm client reads the server's answers one line at a time (worker.cli.warm.client._line)."""

from __future__ import annotations

import _socket

from worker.cli.warm.client import _line


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
