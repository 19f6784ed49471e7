"""A Redis Sentinel deployment of the test's own on loopback: a primary, its replicas and three sentinels,
with short failure detection so a failover takes seconds. The servers are `tests.redis_server` ones."""

from __future__ import annotations

import signal
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import redis

from bus.connection.embedded import free_port, server_binary
from tests.redis_server import RedisServer
from tests.waiting import retry_until

SERVICE = "ibsvc"
# 3 s, not Sentinel's 30: a failover takes seconds. Not 1 s: beside a CPU hog the replica just promoted
# went a second without answering, the sentinels failed it over too, and for the 10 s Sentinel lets a
# demoted primary go on before it makes it a replica, the worker wrote to it and lost those writes (an
# `/auto` step among them: the run paused). The tests are of one failover, not of that double one.
DOWN_AFTER_MS = 3000
FAILOVER_TIMEOUT_MS = 4000
# a replica's first sync starts at once, not after the default 5 s wait for more replicas
QUICK_SYNC = ["--repl-diskless-sync-delay", "0"]


@dataclass
class SentinelProcess:
    folder: Path
    primary_port: int
    port: int = field(default_factory=free_port)
    process: subprocess.Popen[bytes] | None = None

    def start(self) -> SentinelProcess:
        self.folder.mkdir(parents=True, exist_ok=True)
        conf = self.folder / "sentinel.conf"  # the sentinel rewrites it: one file each
        conf.write_text(
            f"port {self.port}\nbind 127.0.0.1\ndir {self.folder}\nlogfile {self.folder / 'sentinel.log'}\n"
            f"sentinel monitor {SERVICE} 127.0.0.1 {self.primary_port} 2\n"
            f"sentinel down-after-milliseconds {SERVICE} {DOWN_AFTER_MS}\n"
            f"sentinel failover-timeout {SERVICE} {FAILOVER_TIMEOUT_MS}\n"
            f"sentinel parallel-syncs {SERVICE} 2\n",
            encoding="utf-8",
        )
        command = [server_binary(), str(conf), "--sentinel"]
        self.process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        retry_until(self.primary, timeout=15, what=f"the sentinel on port {self.port}")
        return self

    def primary(self) -> tuple[str, int] | None:
        """The primary this sentinel names now, or None when it does not answer."""
        client = redis.Redis(port=self.port, socket_connect_timeout=0.5, decode_responses=True)
        try:
            found = client.execute_command("SENTINEL", "get-master-addr-by-name", SERVICE)
        except redis.RedisError:
            return None
        finally:
            client.close()
        return (found[0], int(found[1])) if found else None

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(timeout=30)
        self.process = None


@dataclass
class SentinelSet:
    folder: Path
    replicas: int = 1
    primary: RedisServer = field(init=False)
    copies: list[RedisServer] = field(init=False)
    sentinels: list[SentinelProcess] = field(init=False)

    def start(self) -> SentinelSet:
        self.primary = RedisServer(self.folder / "primary", QUICK_SYNC).start()
        follow = ["--replicaof", "127.0.0.1", str(self.primary.port)]
        self.copies = [
            RedisServer(self.folder / f"replica{n}", [*QUICK_SYNC, *follow]).start()
            for n in range(self.replicas)
        ]
        retry_until(lambda: self._linked(self.primary), timeout=15, what="the replicas to follow the primary")
        retry_until(self._acknowledging, timeout=15, what="the replicas to acknowledge writes (WAIT)")
        self.sentinels = [
            SentinelProcess(self.folder / f"sentinel{n}", self.primary.port).start() for n in range(3)
        ]
        return self

    def _linked(self, primary: RedisServer) -> bool:
        """True once every replica is in sync with `primary` (WAIT counts only those)."""
        info = primary.client().info("replication")
        online = [
            k
            for k, v in info.items()
            if k.startswith("slave") and isinstance(v, dict) and v.get("state") == "online"
        ]
        return info.get("role") == "master" and len(online) >= len(self.copies)

    def _acknowledging(self) -> bool:
        """True once `WAIT` counts every replica: for about a second after its sync a replica is online but
        acknowledges nothing, and a test's first WAIT would count too few."""
        client = redis.Redis(port=self.primary.port, single_connection_client=True)
        try:
            client.set("sentinel-set:ready", "1")  # WAIT counts the writes of its own connection
            return int(client.wait(len(self.copies), 100)) == len(self.copies)
        finally:
            client.close()

    def url(self, service: str = SERVICE) -> str:
        hosts = ",".join(f"127.0.0.1:{s.port}" for s in self.sentinels)
        return f"redis+sentinel://{hosts}/{service}"

    def promoted(self) -> RedisServer | None:
        """The replica every sentinel names as the primary now, once it takes writes; else None."""
        named = {s.primary() for s in self.sentinels}
        for copy in self.copies:
            if named == {("127.0.0.1", copy.port)} and copy.client().info("replication")["role"] == "master":
                return copy
        return None

    def stop(self) -> None:
        for sentinel in self.sentinels:
            sentinel.stop()
        for server in [*self.copies, self.primary]:
            server.stop(signal.SIGKILL)
