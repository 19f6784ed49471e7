"""The one stream reader every background reader runs on, against a redis-server of the test's own: through
a group or after a cursor it handles each entry once across Redis restarts (SIGTERM and kill -9), it stops
in the middle and a second reader of the group goes on with exactly the rest, it stops while Redis is away,
and what a handler leaves out stays pending for the next reader."""

from __future__ import annotations

import signal
import threading
import time

import pytest
import redis

from bus.connection.clients import client_for
from bus.events.streams import Entry
from bus.readers.stream_reader import Cursor, InGroup, StreamReader, background
from tests.redis_server import RedisServer, hung_up_on
from tests.waiting import retry_until

STREAM = "test:reader"


def add(client: redis.Redis, first: int, last: int) -> list[str]:
    return [str(client.xadd(STREAM, {"n": str(n)})) for n in range(first, last)]


class Seen:
    """What a handler was given, in order."""

    def __init__(self) -> None:
        self.ids: list[str] = []

    def __call__(self, entries: list[Entry]) -> None:
        self.ids.extend(entry_id for entry_id, _ in entries)


def clients(server: RedisServer) -> tuple[redis.Redis, redis.Redis]:
    """One to write and look with, one to block in reads."""
    return server.client(), client_for(server.url, blocking=True)


def pending(client: redis.Redis, group: str) -> int:
    return int(client.xpending(STREAM, group)["pending"])


@pytest.mark.timeout(120)
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL], ids=["sigterm", "kill-9"])
@pytest.mark.parametrize("kind", ["group", "cursor"])
def test_each_entry_is_handled_once_across_restarts(own_redis: RedisServer, sig: int, kind: str) -> None:
    writer, reader = clients(own_redis)
    stopping = threading.Event()
    seen = Seen()
    position = InGroup(reader, STREAM, "g", "me", "0") if kind == "group" else Cursor(reader, STREAM)
    thread = background(stopping, reader, "test reader", position, seen).in_thread("test-reader")
    sent = add(writer, 0, 20)
    try:
        for round_ in range(2):
            retry_until(lambda: len(seen.ids) >= len(sent), 30, 0.02, "the entries handled")  # noqa: B023 - called at once
            own_redis.stop(sig)
            own_redis.start()
            sent += add(writer, 100 * (round_ + 1), 100 * (round_ + 1) + 20)  # while it waits for Redis
        retry_until(lambda: len(seen.ids) >= len(sent), 30, 0.02, "the last entries handled")
    finally:
        stopping.set()
        thread.join(10)
    assert not thread.is_alive()
    assert seen.ids == sent  # each once, in order
    if kind == "group":
        assert pending(writer, "g") == 0


@pytest.mark.timeout(60)
def test_a_stop_in_the_middle_leaves_the_rest_to_the_next_reader(own_redis: RedisServer) -> None:
    writer, reader = clients(own_redis)
    sent = add(writer, 0, 10)
    stopping = threading.Event()
    first = Seen()

    def handle_then_stop(entries: list[Entry]) -> None:
        first(entries)
        if len(first.ids) >= 5:
            stopping.set()  # in the middle of the stream: this batch is acknowledged, the next not read

    group = InGroup(reader, STREAM, "g", "one", "0")
    one = background(stopping, reader, "first", group, handle_then_stop, count=3)
    one.run()  # returns at the stop
    assert first.ids == sent[:6]
    assert pending(writer, "g") == 0
    second, again = Seen(), threading.Event()
    two = background(again, reader, "second", InGroup(reader, STREAM, "g", "two", "0"), second)
    thread = two.in_thread("second")
    try:
        retry_until(lambda: len(second.ids) >= 4, 10, 0.02, "the rest handled")
    finally:
        again.set()
        thread.join(5)
    assert not thread.is_alive()  # stopped in a blocking read: seen within its block
    assert second.ids == sent[6:]
    assert pending(writer, "g") == 0


@pytest.mark.timeout(60)
def test_a_stop_while_redis_is_away_ends_the_reader(own_redis: RedisServer) -> None:
    reader = client_for(own_redis.url, blocking=True)
    stopping = threading.Event()
    seen = Seen()
    thread = background(stopping, reader, "test", Cursor(reader, STREAM), seen).in_thread("test")
    own_redis.stop(signal.SIGKILL)
    with hung_up_on(own_redis.port) as knocks:
        retry_until(lambda: knocks.count >= 2, 30, 0.02, "the reader to try again")  # waiting for Redis
        stopping.set()
        thread.join(10)
    assert not thread.is_alive()
    assert seen.ids == []


def test_what_a_handler_leaves_out_stays_pending_for_the_next_reader(own_redis: RedisServer) -> None:
    writer, reader = clients(own_redis)
    sent = add(writer, 0, 6)

    def even_only(entries: list[Entry]) -> list[str]:
        return [entry_id for entry_id, fields in entries if int(fields["n"]) % 2 == 0]

    StreamReader(InGroup(reader, STREAM, "g", "one", "0"), even_only, "first").drain()
    assert pending(writer, "g") == 3
    rest = Seen()
    StreamReader(InGroup(reader, STREAM, "g", "two", "0"), rest, "second").drain()
    assert rest.ids == sent[1::2]
    assert pending(writer, "g") == 0


@pytest.mark.timeout(60)
def test_an_ack_lost_with_redis_is_made_when_it_is_back_and_nothing_is_handled_twice(
    own_redis: RedisServer,
) -> None:
    writer, reader = clients(own_redis)
    sent = add(writer, 0, 5)
    stopping = threading.Event()
    seen = Seen()

    def handle_then_restart(entries: list[Entry]) -> None:
        seen(entries)
        if len(seen.ids) == len(entries):  # the first batch: Redis goes before its ack (they stay pending)
            own_redis.stop(signal.SIGKILL)
            back.start()  # in a while: the ack finds Redis away
        if len(seen.ids) >= len(sent):
            stopping.set()

    back = threading.Timer(1.0, own_redis.start)
    group = InGroup(reader, STREAM, "g", "me", "0")
    background(stopping, reader, "test", group, handle_then_restart, count=3).run()
    back.join()
    assert seen.ids == sent
    assert pending(writer, "g") == 0


class Batches(Seen):
    """What a handler was given, read by read."""

    def __init__(self) -> None:
        super().__init__()
        self.sizes: list[int] = []

    def __call__(self, entries: list[Entry]) -> None:
        super().__call__(entries)
        self.sizes.append(len(entries))


def test_a_lingering_reader_lets_a_busy_streams_entries_gather_into_one_read(own_redis: RedisServer) -> None:
    """A reader always caught up reads an entry at a time; with `linger` it waits after a short read, so what
    came meanwhile is one read (and one acknowledgement), each entry still handled once, in order."""
    writer, reader = clients(own_redis)
    stopping = threading.Event()
    seen = Batches()
    position = InGroup(reader, STREAM, "g", "me", "$")
    thread = background(stopping, reader, "test reader", position, seen, linger=2.0).in_thread("test-reader")
    try:
        retry_until(
            lambda: writer.xinfo_groups(STREAM) if writer.exists(STREAM) else False, 10, 0.02, "the group"
        )
        sent = add(writer, 0, 1)
        retry_until(lambda: seen.sizes == [1], 30, 0.02, "the first entry handled")
        for n in range(1, 10):  # nine more while it lingers, each its own round trip
            sent += add(writer, n, n + 1)
            time.sleep(0.01)
        retry_until(lambda: len(seen.ids) == 10, 30, 0.02, "the nine handled")
    finally:
        stopping.set()
        thread.join(10)
    assert seen.sizes == [1, 9]
    assert seen.ids == sent
    assert pending(writer, "g") == 0
