"""Heartbeat keys: one holder at a time, a dead local holder replaced at once, a lapsed key taken back."""

from __future__ import annotations

import subprocess
import sys

import redis

from bus.stores.heartbeat import Heartbeat, holder_is_dead, new_token
from bus.wire.keys import Keys


def test_one_holder_at_a_time(rds: redis.Redis, keys: Keys) -> None:
    first = Heartbeat(rds, keys.listener("hb"), 10)
    second = Heartbeat(rds, keys.listener("hb"), 10)
    assert first.acquire() is None
    assert second.acquire() == first.token
    first.release()
    assert second.acquire() is None
    first.release()  # not the holder any more: nothing happens
    assert rds.get(keys.listener("hb")) == second.token


def test_a_dead_holder_on_this_machine_is_replaced(rds: redis.Redis, keys: Keys) -> None:
    gone = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True, check=True
    )
    dead_token = new_token().split(":")[0] + f":{gone.stdout.strip()}:dead"
    assert holder_is_dead(dead_token)
    assert not holder_is_dead(new_token())  # this process
    assert not holder_is_dead("another-host:1:x")  # other machines are trusted until the key expires
    rds.set(keys.listener("hb"), dead_token, ex=30)
    assert Heartbeat(rds, keys.listener("hb"), 10).acquire() is None


def test_renew_takes_back_a_lapsed_key_but_never_a_taken_one(rds: redis.Redis, keys: Keys) -> None:
    beat = Heartbeat(rds, keys.worker("w"), 10)
    assert beat.acquire() is None
    rds.delete(keys.worker("w"))  # expired while a long step ran
    beat.renew()
    assert rds.get(keys.worker("w")) == beat.token and 0 < rds.ttl(keys.worker("w")) <= 10
    rds.set(keys.worker("w"), "someone-else:1:x")
    beat.renew()
    assert rds.get(keys.worker("w")) == "someone-else:1:x"
