"""Shared test fixtures: a real Redis in a namespace of its own per test, scrubbed afterwards."""

from __future__ import annotations

import os
import signal
import uuid
from collections.abc import Iterator

import pytest
import redis
from hypothesis import settings

from bus.keys import Keys

REDIS_URL = os.environ.get("IB_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")

# Hypothesis fails an example that takes over 200 ms by default: a deadline of the machine's load, not of
# the code (a property test failed so on two busy cores). Speed is measured in bench/, never asserted.
settings.register_profile("ittybus", deadline=None)
settings.load_profile("ittybus")

# A shell without job control starts background commands with SIGINT ignored, and an ignored signal stays
# ignored in every child: the `ib` processes the tests stop with SIGINT (as Ctrl-C would) would never hear
# it. Tests start their children the way a terminal does.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(scope="session")
def redis_url() -> str:
    client = redis.Redis.from_url(REDIS_URL)
    try:
        client.ping()
    except redis.RedisError as e:  # the test command starts one; say so when it did not
        pytest.fail(f"no Redis at {REDIS_URL} ({e}); run the tests with .ci/run or start redis-server")
    finally:
        client.close()
    return REDIS_URL


@pytest.fixture
def namespace() -> str:
    return f"ibtest:{uuid.uuid4().hex[:10]}:"


@pytest.fixture
def keys(namespace: str) -> Keys:
    return Keys(namespace)


@pytest.fixture
def rds(redis_url: str, namespace: str) -> Iterator[redis.Redis]:
    """A client for assertions; every key of the test's namespace is deleted afterwards."""
    client = redis.Redis.from_url(redis_url, decode_responses=True)
    yield client
    batch = list(client.scan_iter(match=namespace.replace("[", "\\[").replace("]", "\\]") + "*", count=1000))
    for i in range(0, len(batch), 500):
        client.delete(*batch[i : i + 500])
    client.close()
