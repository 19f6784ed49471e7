"""Liveness keys: one process holds a named key with a TTL and renews it; the key's value says who.

Used by `ib listen`, the worker and the status node. A holder killed with SIGKILL cannot delete its
key; on the same machine a newcomer sees that the holder's pid is gone and takes over at once, while a
holder on another machine is trusted until its key expires.
"""

from __future__ import annotations

import os
import socket
import uuid
from dataclasses import dataclass, field

import redis

_RENEW = """
local holder = redis.call('GET', KEYS[1])
if holder == ARGV[1] then return redis.call('EXPIRE', KEYS[1], ARGV[2]) end
if not holder then return redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2]) end
return 0
"""
_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""
_STEAL = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('SET', KEYS[1], ARGV[2], 'EX', ARGV[3]) end
return false
"""


def new_token() -> str:
    """`host:pid:random`: who holds a key, readable by people and by `holder_is_dead`."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def holder_is_dead(holder: str) -> bool:
    """True when `holder` (a token) was a process on this machine that no longer exists."""
    host, _, rest = holder.partition(":")
    pid = rest.partition(":")[0]
    if host != socket.gethostname() or not pid.isdigit():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False


@dataclass
class Heartbeat:
    client: redis.Redis
    key: str
    ttl: int
    token: str = field(default_factory=new_token)

    def acquire(self) -> str | None:
        """Take the key; returns None when taken, else the live holder's token."""
        for _ in range(3):  # the holder's key may expire between our SET and GET: then try again
            if self.client.set(self.key, self.token, nx=True, ex=self.ttl):
                return None
            holder = self.client.get(self.key)
            if holder is None:
                continue
            if holder_is_dead(str(holder)) and self.client.eval(
                _STEAL, 1, self.key, str(holder), self.token, self.ttl
            ):
                return None
            return str(holder)
        return "another process"

    def renew(self) -> None:
        """Keep the key alive; take it back if it expired meanwhile (a long step outlived the TTL)."""
        self.client.eval(_RENEW, 1, self.key, self.token, self.ttl)

    def release(self) -> None:
        self.client.eval(_RELEASE, 1, self.key, self.token)
