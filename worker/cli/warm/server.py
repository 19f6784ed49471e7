"""The warm server: one per user and installation, started by the first `ib` that found none. It loads
every module a command may use, then forks a process per request that takes the client's streams, folder,
environment and agent identity and runs the command as `ib` would; it reports how that process ended.

One thread, one loop: accept a request, fork, and reap the command processes (a SIGCHLD wakes the loop).
A client that goes away (its `ib` killed) gets its command process sent SIGTERM. The server serves only
its own user in its own mount and pid namespaces: a sandboxed agent's `ib` is not served (the command
process runs outside the sandbox). When ittybus's code changes on disk it stops serving and ends, and the
next `ib` starts a new one; with no command for IDLE_EXIT seconds it ends too.

    python -m worker.cli.warm.server ADDRESS
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import gc
import importlib
import os
import pkgutil
import selectors
import signal
import socket
import struct
import sys
import time
import traceback

from worker.cli.warm import wire

PACKAGES = ("bus", "worker")
"""What the server loads before it serves: every module of these (the bot and the services that stay in
their own process, wire.UNSERVED, are not commands it runs)..."""
LIBRARIES = ("rich", "typer", "click", "markdown_it", "mdurl", "redis", "pydantic_settings", "attr")
"""... and of the libraries whose modules the commands load as they go (rich's tables and markdown for the
help, redis-py's commands), with the codecs a host name needs."""
REQUEST_TIMEOUT = 5.0  # seconds a client has to send its request once connected
FDS = 4  # standard input, output, error and the working folder
HELD_AT_FORK = {signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT}  # see _take


LOG_LIMIT = 1_000_000  # bytes of warm.log kept: past it, the log starts again


def note(address: str, line: str) -> None:
    """One line in warm.log beside the socket: what the server did that a person may ask about."""
    path = os.path.join(os.path.dirname(address), "warm.log")
    with contextlib.suppress(OSError):
        flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND
        if os.path.exists(path) and os.path.getsize(path) > LOG_LIMIT:
            flags |= os.O_TRUNC
        fd = os.open(path, flags, 0o600)
        try:
            os.write(fd, f"{time.strftime('%Y-%m-%d %H:%M:%S')} {os.getpid()} {line}\n".encode())
        finally:
            os.close(fd)


class Server:
    def __init__(self, address: str) -> None:
        self.address = address
        self.pid = os.getpid()
        self.children: dict[int, socket.socket] = {}
        self.selector = selectors.DefaultSelector()
        self.sources = _sources()
        self.last = time.monotonic()
        self.serving = True
        self.namespaces = _namespaces(self.pid)
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.wake_read, self.wake_write = socket.socketpair()

    def bind(self) -> None:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.address)  # a dead server's: the lock this one holds says none lives
        old = os.umask(0o177)
        try:
            self.listener.bind(self.address)
        finally:
            os.umask(old)
        self.listener.listen(64)
        self.listener.setblocking(False)
        self.wake_read.setblocking(False)
        self.wake_write.setblocking(False)
        signal.set_wakeup_fd(self.wake_write.fileno())
        signal.signal(signal.SIGCHLD, lambda *_: None)
        signal.signal(signal.SIGTERM, lambda *_: self.stop())
        self.selector.register(self.listener, selectors.EVENT_READ, "accept")
        self.selector.register(self.wake_read, selectors.EVENT_READ, "wake")

    def serve(self) -> None:
        while self.serving or self.children:
            for key, _ in self.selector.select(timeout=60.0):
                if key.data == "accept":
                    self._accept()
                elif key.data == "wake":
                    with contextlib.suppress(BlockingIOError):
                        self.wake_read.recv(4096)
                else:
                    self._client_gone(key.data, key.fileobj)  # type: ignore[arg-type]
            self._reap()
            if self.serving and not self.children and time.monotonic() - self.last > wire.IDLE_EXIT:
                self.stop()

    def stop(self) -> None:
        """Take no more requests (the running commands finish and are reported)."""
        if not self.serving:
            return
        self.serving = False
        with contextlib.suppress(KeyError, ValueError):
            self.selector.unregister(self.listener)
        with contextlib.suppress(OSError):
            if os.stat(self.address).st_ino == os.fstat(self.listener.fileno()).st_ino:
                os.unlink(self.address)
        self.listener.close()

    def _accept(self) -> None:
        try:
            conn, _ = self.listener.accept()
        except (BlockingIOError, OSError):
            return
        self.last = time.monotonic()
        try:
            self._take(conn)
        except (OSError, wire.BadRequest):
            conn.close()

    def _take(self, conn: socket.socket) -> None:
        conn.settimeout(REQUEST_TIMEOUT)
        peer_pid, uid, _gid = struct.unpack("3i", conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12))
        body, fds = _receive(conn)
        try:
            if uid != os.getuid() or _namespaces(peer_pid) != self.namespaces:
                note(
                    self.address,
                    f"not served: pid {peer_pid} is another user's or in another mount or pid namespace",
                )
                conn.sendall(f"no {wire.OTHER_ROOM}\n".encode())
                conn.close()
                return
            if _changed(self.sources):
                note(self.address, "ittybus's code changed on disk: serving no more")
                conn.sendall(f"no {wire.STALE}\n".encode())
                conn.close()
                self.stop()
                return
            request = wire.decode_request(body)
            if len(fds) != FDS:
                raise wire.BadRequest("the streams and folder did not come")
            # held across the fork: one sent to the new process before it put back the default handlers
            # would run the server's own (which only stops taking requests) and be lost
            held = signal.pthread_sigmask(signal.SIG_BLOCK, HELD_AT_FORK)
            pid = os.fork()
            if pid == 0:
                self._run_child(peer_pid, request, fds, held)  # never returns
            signal.pthread_sigmask(signal.SIG_SETMASK, held)
            conn.sendall(f"pid {pid}\n".encode())
            self.children[pid] = conn
            self.selector.register(conn, selectors.EVENT_READ, pid)
        finally:
            for fd in fds:
                os.close(fd)

    def _client_gone(self, pid: int, conn: socket.socket) -> None:
        """The client's end became readable: it sends nothing more, so it went away (killed): the command
        process is told to end as its `ib` was."""
        with contextlib.suppress(OSError):
            if conn.recv(64, socket.MSG_PEEK | socket.MSG_DONTWAIT):
                conn.recv(64)  # a client that talks: ignored
                return
        with contextlib.suppress(KeyError, ValueError):
            self.selector.unregister(conn)
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)

    def _reap(self) -> None:
        while self.children:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            conn = self.children.pop(pid, None)
            if conn is None:
                continue
            with contextlib.suppress(KeyError, ValueError):
                self.selector.unregister(conn)
            if os.WIFSIGNALED(status):
                answer = f"signal {os.WTERMSIG(status)}\n"
            else:
                answer = f"exit {os.waitstatus_to_exitcode(status)}\n"
            with contextlib.suppress(OSError):
                conn.sendall(answer.encode())
            conn.close()

    def _run_child(
        self,
        peer_pid: int,
        request: tuple[str, list[str], dict[str, str], int, tuple[str, ...]],
        fds: list[int],
        held: set[int | signal.Signals],
    ) -> None:
        """In the forked process: become the client's command and run it; ends the process. The signals
        held across the fork land once the command's handlers are in place."""
        code = 1
        try:
            signal.set_wakeup_fd(-1)
            for number in (signal.SIGCHLD, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT):
                signal.signal(number, signal.SIG_DFL)
            signal.signal(signal.SIGINT, signal.default_int_handler)
            signal.pthread_sigmask(signal.SIG_SETMASK, held)
            self.selector.close()
            for conn in self.children.values():
                conn.close()
            for closing in (self.listener, self.wake_read, self.wake_write):
                closing.close()
            argv0, args, environ, umask, encodings = request
            for target, fd in zip((0, 1, 2), fds[:3], strict=True):
                os.dup2(fd, target)
            os.fchdir(fds[3])
            for fd in fds:
                os.close(fd)
            os.umask(umask)
            os.environ.clear()
            os.environ.update(environ)
            sys.argv = [argv0, *args]
            _streams(encodings)
            code = _command(peer_pid, environ)
        except BaseException:  # whatever happened, this process ends here; it must never serve
            traceback.print_exc()
        finally:
            with contextlib.suppress(BaseException):
                sys.stdout.flush()
                sys.stderr.flush()
            os._exit(code)


def _command(peer_pid: int, environ: dict[str, str]) -> int:
    """Run the `ib` command in this (forked) process as the client's own process would; its exit code."""
    from worker.boundary.identity import adopt_caller
    from worker.cli.app import run

    adopt_caller(peer_pid, environ)
    try:
        run()
        code: object = 0
    except SystemExit as e:
        code = e.code
    except KeyboardInterrupt:  # as Python ends on an uncaught Ctrl-C: by the signal
        atexit._run_exitfuncs()
        sys.stdout.flush()
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
        return 130
    atexit._run_exitfuncs()
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    print(code, file=sys.stderr)
    return 1


def _streams(encodings: tuple[str, ...]) -> None:
    """Standard streams as the client's interpreter made them for the same descriptors."""
    stdin_enc, stdin_err, out_enc, out_err, err_enc, err_err = encodings
    with contextlib.suppress(Exception):
        sys.stdin.reconfigure(encoding=stdin_enc, errors=stdin_err)  # type: ignore[union-attr]
    for stream, encoding, errors in ((sys.stdout, out_enc, out_err), (sys.stderr, err_enc, err_err)):
        with contextlib.suppress(Exception):
            stream.reconfigure(  # type: ignore[union-attr]
                encoding=encoding,
                errors=errors,
                line_buffering=stream is sys.stderr or os.isatty(stream.fileno()),
            )


def _receive(conn: socket.socket) -> tuple[bytes, list[int]]:
    """The request's body and the descriptors sent beside it."""
    first, fds, _flags, _addr = socket.recv_fds(conn, 65536, FDS)
    got = bytearray(first)
    if len(got) < wire.HEADER:
        for fd in fds:
            os.close(fd)
        raise wire.BadRequest("short request")
    size = int.from_bytes(got[: wire.HEADER], "big")
    if size > wire.MAX_REQUEST:
        for fd in fds:
            os.close(fd)
        raise wire.BadRequest("request too large")
    while len(got) < wire.HEADER + size:
        piece = conn.recv(wire.HEADER + size - len(got))
        if not piece:
            for fd in fds:
                os.close(fd)
            raise wire.BadRequest("cut short")
        got += piece
    return bytes(got[wire.HEADER :]), list(fds)


def _namespaces(pid: int) -> tuple[int, int] | None:
    """The mount and pid namespaces of `pid` (None when they cannot be read)."""
    try:
        return (os.stat(f"/proc/{pid}/ns/mnt").st_ino, os.stat(f"/proc/{pid}/ns/pid").st_ino)
    except OSError:
        return None


def _sources() -> dict[str, int]:
    """The modification time of each loaded ittybus module's file: a change means new code."""
    found = {}
    for name, module in list(sys.modules.items()):
        path = getattr(module, "__file__", None)
        if path and name.partition(".")[0] in PACKAGES:
            with contextlib.suppress(OSError):
                found[path] = os.stat(path).st_mtime_ns
    return found


def _changed(sources: dict[str, int]) -> bool:
    """Whether any of the files the server loaded changed (or went) since."""
    for path, mtime in sources.items():
        try:
            if os.stat(path).st_mtime_ns != mtime:
                return True
        except OSError:
            return True
    return False


def _preload() -> None:
    """Every module a command may import, loaded once here instead of in each command process."""
    from worker.cli.app import BY_NAME, click_command

    for word in [None, *BY_NAME]:
        _coercions(click_command(word))
    importlib.import_module("encodings.idna")
    for package in PACKAGES + LIBRARIES:
        try:
            root = importlib.import_module(package)
        except ImportError:
            continue
        for info in pkgutil.walk_packages(root.__path__, f"{package}.", onerror=lambda _name: None):
            if info.name.endswith("__main__") or ".fake." in info.name:
                continue
            with contextlib.suppress(Exception):
                importlib.import_module(info.name)


def _coercions(command: object) -> None:
    """Make each option's and argument's value reader (typer builds one per parameter, a pydantic
    TypeAdapter, the first time a value is read): made here once, not in every command process."""
    for param in getattr(command, "params", ()):
        make = getattr(param, "get_runtime_param", None)
        if make is not None:
            with contextlib.suppress(Exception):
                make()
    for sub in getattr(command, "commands", {}).values():
        _coercions(sub)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m worker.cli.warm.server ADDRESS", file=sys.stderr)
        return 2
    address = args[0]
    if not wire.private_folder(os.path.dirname(address)):
        return 1
    lock = os.open(address + ".lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return 0  # another server is starting or serving
    _preload()
    server = Server(address)
    server.bind()
    note(address, f"serving at {address} ({sys.executable})")
    gc.collect()
    gc.freeze()  # the loaded modules stay out of each command process's collections (and copies)
    server.serve()
    note(address, "ended")
    return 0


if __name__ == "__main__":
    sys.exit(main())
