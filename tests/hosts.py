"""Several "machines" for multi-host tests: each host runs its commands in a network namespace of its
own (`ip netns exec`), or on this machine's loopback where namespaces cannot be made.

A network (`Network`) is four namespaces — redis, wa, wb, cli — joined by veth pairs to a bridge in a
fifth namespace (the switch), with addresses from 192.0.2.0/24. Nothing is added to the test's own
namespace (whose addresses may be anything), so nothing leaves the machine and nothing collides.
`inside(netns)` lets this process open a socket in a namespace (setns on one thread), which is how the
fake Bot API listens where the bot runs.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import shutil
import subprocess
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from tests.cli import IB

CLONE_NEWNET = 0x40000000
SUBNET = "192.0.2"
HOSTS = {"redis": 1, "wa": 2, "wb": 3, "cli": 4}
REDIS_PORT = 6390


class NoNamespaces(Exception):
    """This machine cannot make network namespaces (not root, no `ip`, or the kernel refuses)."""


def _ip(*args: str) -> None:
    done = subprocess.run(["ip", *args], capture_output=True, text=True, timeout=10, check=False)
    if done.returncode != 0:
        raise NoNamespaces(f"`ip {' '.join(args)}` failed: {done.stderr.strip() or done.returncode}")


@dataclass
class Network:
    """The namespaces of one test run; `close()` removes every one of them (and so their links)."""

    run: str = field(default_factory=lambda: uuid.uuid4().hex[:6])
    made: list[str] = field(default_factory=list)

    def netns(self, host: str) -> str:
        return f"ib{self.run}-{host}"

    def address(self, host: str) -> str:
        return f"{SUBNET}.{HOSTS[host]}"

    def open(self) -> Network:
        if os.geteuid() != 0:
            raise NoNamespaces("network namespaces need root (`ip netns add`); this test runs as a user")
        if shutil.which("ip") is None:
            raise NoNamespaces("the `ip` command (iproute2) is not installed")
        switch = self.netns("sw")
        self._add(switch)
        _ip("-n", switch, "link", "add", "br0", "type", "bridge")
        _ip("-n", switch, "link", "set", "br0", "up")
        for host in HOSTS:
            ns = self.netns(host)
            self._add(ns)
            _ip("-n", switch, "link", "add", f"v-{host}", "type", "veth", "peer", "name", "eth0", "netns", ns)
            _ip("-n", switch, "link", "set", f"v-{host}", "master", "br0", "up")
            _ip("-n", ns, "addr", "add", f"{self.address(host)}/24", "dev", "eth0")
            _ip("-n", ns, "link", "set", "eth0", "up")
            _ip("-n", ns, "link", "set", "lo", "up")
        return self

    def _add(self, ns: str) -> None:
        _ip("netns", "add", ns)
        self.made.append(ns)

    def cut(self, host: str) -> None:
        """Pull the host's cable: it stays up but reaches nobody (Redis going away for it alone)."""
        _ip("-n", self.netns(host), "link", "set", "eth0", "down")

    def mend(self, host: str) -> None:
        _ip("-n", self.netns(host), "link", "set", "eth0", "up")

    def close(self) -> None:
        for ns in reversed(self.made):
            subprocess.run(["ip", "netns", "del", ns], capture_output=True, check=False, timeout=10)
        self.made.clear()


@contextlib.contextmanager
def inside(netns: str) -> Iterator[None]:
    """Run the body with this thread in `netns`: sockets made here stay in it after the block."""
    libc = ctypes.CDLL(None, use_errno=True)
    own = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
    target = os.open(f"/run/netns/{netns}", os.O_RDONLY)
    try:
        if libc.setns(target, CLONE_NEWNET) != 0:
            raise OSError(ctypes.get_errno(), f"setns into {netns} failed")
        try:
            yield
        finally:
            libc.setns(own, CLONE_NEWNET)
    finally:
        os.close(own)
        os.close(target)


@dataclass
class Host:
    """One machine: its namespace (None: this machine), its environment and its working folder."""

    name: str
    netns: str | None
    cwd: Path
    env: dict[str, str] = field(default_factory=dict)

    def argv(self, *args: str) -> list[str]:
        return ["ip", "netns", "exec", self.netns, *args] if self.netns else list(args)

    def environ(self, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        base = {
            k: v for k, v in os.environ.items() if not k.startswith("IB_") and k not in ("TMUX", "TMUX_PANE")
        }
        return {**base, **self.env, **(extra or {})}

    def ib(
        self, *args: str, timeout: float = 60, stdin: str | None = None
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            self.argv(IB, *args),
            input=stdin,
            capture_output=True,
            text=True,
            env=self.environ(),
            cwd=self.cwd,
            timeout=timeout,
            check=False,
        )

    def start(self, log: Path, *argv: str) -> subprocess.Popen[bytes]:
        with log.open("ab") as out:
            return subprocess.Popen(
                self.argv(*argv), stdout=out, stderr=subprocess.STDOUT, env=self.environ(), cwd=self.cwd
            )
