"""Typed reads and writes of Redis hashes and sets for clients made with `decode_responses=True`.

redis-py annotates replies as `bytes | str` for both modes; our clients always decode, so the stores
read through these few functions and keep their own code free of casts.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

import redis


def read_hash(client: redis.Redis, key: str) -> dict[str, str]:
    return cast(dict[str, str], client.hgetall(key))


def write_hash(client: redis.Redis | redis.client.Pipeline, key: str, values: Mapping[str, str]) -> None:
    client.hset(key, mapping=cast(Any, values))


def read_hashes(client: redis.Redis, keys: list[str]) -> list[dict[str, str]]:
    """Many hashes in one round trip (no MULTI: a read of thousands needs no transaction)."""
    pipe = client.pipeline(transaction=False)
    for key in keys:
        pipe.hgetall(key)
    return cast(list[dict[str, str]], pipe.execute())


def append_entry(
    client: redis.Redis | redis.client.Pipeline, stream: str, fields: Mapping[str, str], maxlen: int
) -> None:
    """XADD with approximate trimming."""
    client.xadd(stream, cast(Any, fields), maxlen=maxlen, approximate=True)


def members(client: redis.Redis, key: str) -> set[str]:
    return cast(set[str], client.smembers(key))


def ordered(client: redis.Redis, key: str) -> list[str]:
    return cast(list[str], client.zrange(key, 0, -1))
