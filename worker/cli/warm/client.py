"""The hot half of the warm `ib`: hand this command to the warm server (worker.cli.warm.server) with this
process's standard streams and working folder, pass on the signals it gets, and end as the command's
process ended. When no server answers, start one for the next command and say so to the caller, which
then runs the command itself. Hot: stdlib only (the C socket module, not `socket`, which loads enum).
"""

from __future__ import annotations

import _socket
import os
import sys

from worker.cli.warm import wire

TYPE_CHECKING = False
if TYPE_CHECKING:
    import signal
else:  # the C module: `signal` loads enum for its IntEnums, milliseconds on every `ib`
    import _signal as signal

FORWARDED = (
    signal.SIGINT,
    signal.SIGTERM,
    signal.SIGHUP,
    signal.SIGQUIT,
    signal.SIGUSR1,
    signal.SIGUSR2,
    signal.SIGWINCH,
)
CONNECT_TIMEOUT = 2.0  # seconds to reach the server
START_TIMEOUT = 120.0  # seconds the server may take to start a command it took (a machine under a CPU hog)


class NotServed(Exception):
    """The server is absent (`absent`) or did not take this request: run the command here."""

    def __init__(self, absent: bool = False) -> None:
        super().__init__()
        self.absent = absent


def run(argv: list[str]) -> int:
    """Run `ib argv` in the warm server; its exit status (a signal's death reproduced on this process).
    Raises NotServed when the command is to run here."""
    if not _own_streams():
        raise NotServed()
    conn = _connect()
    forwarding = _Forwarding()  # before the request: the command may print, and be signalled, at once
    try:
        try:
            pid = _start(conn, argv)
        except BaseException:
            forwarding.cancel()  # not started (or not known to be): this process acts on what came
            raise
        forwarding.to(pid)
        answer = _line(conn, None)
    finally:
        conn.close()
    kind, _, value = answer.partition(" ")
    if kind == "signal" and value.isdigit():
        number = int(value)
        if number not in (signal.SIGKILL, signal.SIGSTOP):  # those two take no handler
            signal.signal(number, signal.SIG_DFL)
        os.kill(os.getpid(), number)
        return 128 + number  # a signal that does not end a process (SIGCHLD, SIGWINCH): as a shell says it
    if kind == "exit" and value.lstrip("-").isdigit():
        return int(value)
    print(f"ib: error: the warm server went away while `ib {' '.join(argv)}` ran", file=sys.stderr)
    return 1


def _own_streams() -> bool:
    """Whether sys.stdin, stdout and stderr are still the interpreter's own (on descriptors 0, 1 and 2): a
    program that called `main()` with them replaced (a test capturing output) gets the command here."""
    return sys.stdin is sys.__stdin__ and sys.stdout is sys.__stdout__ and sys.stderr is sys.__stderr__


def _connect() -> _socket.socket:
    address = wire.address()
    if not wire.private_folder(os.path.dirname(address)):  # another user's folder: never send them a thing
        raise NotServed()
    conn = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    conn.settimeout(CONNECT_TIMEOUT)
    try:
        conn.connect(address)
    except (FileNotFoundError, ConnectionRefusedError) as e:
        conn.close()
        raise NotServed(absent=True) from e
    except OSError as e:  # a timeout, a folder we cannot enter
        conn.close()
        raise NotServed() from e
    return conn


def _start(conn: _socket.socket, argv: list[str]) -> int:
    """Send the request with this process's streams and folder; the command process's pid."""
    opened: list[int] = []
    fds = []
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
            fds.append(fd)
        except OSError:  # a closed stream is /dev/null to the command, as Python makes it
            opened.append(os.open(os.devnull, os.O_RDWR))
            fds.append(opened[-1])
    try:
        opened.append(os.open(".", os.O_RDONLY | os.O_DIRECTORY))
    except OSError as e:  # the working folder is gone: the command says so itself
        raise NotServed() from e
    fds.append(opened[-1])
    streams = (sys.stdin, sys.stdout, sys.stderr)
    encodings = tuple(part for s in streams for part in _encoding(s))
    request = wire.encode_request(sys.argv[0], argv, dict(os.environ), _umask(), encodings)
    try:
        conn.sendmsg([request], [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, _fd_array(fds))])
    except OSError as e:  # nothing was taken: the command runs here
        raise NotServed() from e
    finally:
        for fd in opened:
            os.close(fd)
    # Sent: from here the command must never also run here (it did, twice, when a server busy beside a CPU
    # hog answered after a short timeout). The server answers `no …` or closes before it forks, else `pid`.
    try:
        answer = _line(conn, START_TIMEOUT)
    except ConnectionResetError:  # in the backlog of a server that stopped (new code on disk): never taken
        answer = ""
    except OSError:
        print(
            f"ib: error: the warm server took `ib {' '.join(argv)}` but did not say it started it within "
            f"{START_TIMEOUT:.0f} s; see its warm.log (IB_WARM=0 runs commands without it)",
            file=sys.stderr,
        )
        raise SystemExit(1) from None
    kind, _, value = answer.partition(" ")
    if kind != "pid" or not value.isdigit():
        raise NotServed(absent=not answer)
    return int(value)


def _fd_array(fds: list[int]) -> bytes:
    """The descriptors as SCM_RIGHTS carries them: C ints in this machine's order (what `array("i")`
    makes; `array` is not imported for it: it loads collections, milliseconds on every `ib`)."""
    return b"".join(fd.to_bytes(4, sys.byteorder, signed=True) for fd in fds)


def _encoding(stream: object) -> tuple[str, str]:
    return (getattr(stream, "encoding", None) or "utf-8", getattr(stream, "errors", None) or "strict")


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _line(conn: _socket.socket, timeout: float | None) -> str:
    """One answer line, leaving what follows it in the socket; "" when the server closed the connection
    first. A quick command's `pid N` and `exit N` arrive together on a busy machine: read as one line,
    they were no `pid` answer, and the command ran here a second time (seen beside a CPU hog: its
    error printed twice)."""
    conn.settimeout(timeout)
    got = b""
    while not got.endswith(b"\n"):
        waiting = conn.recv(64, _socket.MSG_PEEK)
        if not waiting:
            return ""
        end = waiting.find(b"\n")
        got += conn.recv(end + 1 if end >= 0 else len(waiting))
    return got.decode("ascii", "replace").strip()


class _Forwarding:
    """The signals this process gets go to the command's process. Set up before the request is sent: a
    quick command prints before this process reads its pid, and a caller that saw the output and sent
    SIGTERM killed `ib` itself (exit -15 where the command exits 0; seen beside a CPU hog). What comes
    before the pid is known waits for it; a second one of a kind then acts at once, as it would here."""

    def __init__(self) -> None:
        self.pid = 0
        self.waiting: list[int] = []
        self.before = {number: signal.getsignal(number) for number in FORWARDED}
        for number in FORWARDED:
            signal.signal(number, self._got)

    def _got(self, number: int, _frame: object) -> None:
        if self.pid:
            self._send(number)
        elif number in self.waiting:  # asked twice before the command started: not waiting any more
            self.cancel()
            os.kill(os.getpid(), number)
        else:
            self.waiting.append(number)

    def to(self, pid: int) -> None:
        self.pid = pid
        for number in self.waiting:
            self._send(number)
        self.waiting = []

    def cancel(self) -> None:
        """Back to this process's own handlers, with what came meanwhile raised here."""
        for number, handler in self.before.items():
            signal.signal(number, signal.SIG_DFL if handler is None else handler)
        came, self.waiting = self.waiting, []
        for waited in came:
            os.kill(os.getpid(), waited)

    def _send(self, number: int) -> None:
        try:  # noqa: SIM105 - contextlib is not loaded on this path
            os.kill(self.pid, number)
        except ProcessLookupError:
            pass


def start_server() -> None:
    """Start the warm server in the background, out of this process's session and streams, with an
    environment that names no secret (its command processes take each client's own)."""
    address = wire.address()
    if not wire.private_folder(os.path.dirname(address)):
        return
    import subprocess

    kept = {k: v for k, v in os.environ.items() if k in _KEPT or k.startswith("LC_")}
    try:  # noqa: SIM105 - as above
        subprocess.Popen(
            [sys.executable, "-P", "-m", "worker.cli.warm.server", address],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            cwd="/",
            env=kept,
            start_new_session=True,
        )
    except OSError:
        pass  # the next command tries again; this one runs as it always did


_KEPT = frozenset({"PATH", "HOME", "LANG", "USER", "LOGNAME", "TMPDIR", "XDG_RUNTIME_DIR", "PYTHONPATH"})
