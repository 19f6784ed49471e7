"""A redis-server of the test's own, on a free loopback port in a temporary folder: started, stopped,
killed and started again on the same port and data (AOF), never the shared one."""

from __future__ import annotations

import shutil
import signal
import socket
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import redis

from bus.connection.embedded import free_port, server_binary
from tests.waiting import retry_until


def system_binary() -> str:
    """The system's redis-server (7.x, built with TLS); tests/run.sh installs it when missing."""
    found = shutil.which("redis-server")
    if not found:
        raise AssertionError("no redis-server on PATH: run the tests with tests/run.sh, which installs it")
    return found


@dataclass
class RedisServer:
    folder: Path
    args: list[str] = field(default_factory=list)
    binary: str = field(default_factory=server_binary)
    port: int = field(default_factory=free_port)
    password: str | None = None
    process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        auth = f":{self.password}@" if self.password else ""
        return f"redis://{auth}127.0.0.1:{self.port}/0"

    def start(self) -> RedisServer:
        self.folder.mkdir(parents=True, exist_ok=True)
        command = [self.binary, "--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(self.folder)]
        command += ["--save", "", "--logfile", str(self.folder / "redis.log"), *self.args]
        if self.password:
            command += ["--requirepass", self.password]
        self.process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        retry_until(self.answers, timeout=15, what=f"redis-server on port {self.port}")
        return self

    def answers(self) -> bool:
        if self.process is not None and self.process.poll() is not None:
            log = (self.folder / "redis.log").read_text(errors="replace")[-2000:]
            raise AssertionError(f"redis-server exited {self.process.returncode}: {log}")
        client = redis.Redis.from_url(self.url, socket_connect_timeout=0.5)
        try:
            return bool(client.ping())
        except redis.RedisError:
            return False
        finally:
            client.close()

    def stop(self, sig: int = signal.SIGTERM) -> None:
        """SIGTERM (a clean shutdown) or SIGKILL (a crash); waits until the process is gone."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(sig)
            self.process.wait(timeout=30)
        self.process = None

    def client(self) -> redis.Redis:
        return redis.Redis.from_url(self.url, decode_responses=True)


@dataclass
class Knocks:
    count: int = 0


@contextmanager
def hung_up_on(port: int) -> Iterator[Knocks]:
    """While a Redis is down: every connection to its port is accepted and closed at once (as a proxy
    in front of a restarting Redis does). `Knocks.count` is how many tries came, so that a test can
    keep Redis away through several of a consumer's reconnect attempts without sleeping."""
    door = socket.socket()
    door.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    door.bind(("127.0.0.1", port))
    door.listen(64)
    door.settimeout(0.05)
    knocks, closing = Knocks(), threading.Event()

    def answer() -> None:
        while not closing.is_set():
            try:
                conn, _ = door.accept()
            except TimeoutError:
                continue
            conn.close()
            knocks.count += 1

    thread = threading.Thread(target=answer, name=f"hung-up-on-{port}", daemon=True)
    thread.start()
    try:
        yield knocks
    finally:
        closing.set()
        thread.join(timeout=5)
        door.close()
