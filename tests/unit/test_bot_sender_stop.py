"""The bot's sender ends when it is cancelled, whenever the cancel comes: `ib bot` waits for it on SIGTERM.
On Python 3.11 `asyncio.wait_for` returned normally when the cancel arrived as the sender was woken, and
the sender went back to waiting on its empty outbox for good (an `ib bot` seen hanging beside a CPU hog)."""

from __future__ import annotations

import asyncio
import logging

import pytest
import redis.asyncio as aredis
from telegram import Bot

from bot.delivery.forum import Forum
from bot.delivery.outbound import Batch, Outbox
from bot.delivery.pacing import Limits
from bot.delivery.sender import Sender
from bot.delivery.waiting import cancel_and_wait, wait_set
from bot.topics.topics import TopicRegistry
from bus.wire.keys import Keys

ENDS_WITHIN = 5.0  # seconds: a cancelled task ends in a few turns of the loop; this only bounds a hang


async def _accepted(_batch: Batch, _message_id: int | None) -> None:
    raise AssertionError("nothing is sent")


def _sender() -> Sender:
    forum = Forum(Bot("123456:unused", base_url="http://127.0.0.1:9/bot"), -100)  # never called
    registry = TopicRegistry(aredis.Redis(), Keys("ibtest:unused:"))  # never read
    return Sender(forum, Outbox(Limits()), registry, _accepted)


async def _turns(count: int) -> None:
    for _ in range(count):
        await asyncio.sleep(0)


@pytest.mark.parametrize("turns", [0, 1, 2, 3])
def test_the_sender_ends_when_cancelled_as_it_is_woken(turns: int) -> None:
    async def scenario() -> tuple[bool, bool]:
        sender = _sender()
        task = asyncio.create_task(sender.run())
        await _turns(5)  # it waits on its empty outbox
        sender.loading(True)  # a backlog is being read ...
        sender.adopt_status(7, 70)  # ... this wakes it (nothing to send): it waits for the backlog
        await _turns(5)
        sender.loading(False)  # the backlog is read ...
        await _turns(turns)
        task.cancel()  # ... and the bot stops, just then
        await asyncio.wait([task], timeout=ENDS_WITHIN)
        return task.done(), task.done() and task.cancelled()  # (asyncio.run cancels it again on the way out)

    assert asyncio.run(scenario()) == (True, True)


def test_wait_set_says_whether_the_event_came() -> None:
    async def scenario() -> tuple[bool, bool, bool]:
        event = asyncio.Event()
        missed = await wait_set(event, 0.01)
        asyncio.get_running_loop().call_soon(event.set)
        came = await wait_set(event, None)
        return missed, came, await wait_set(event, 0)

    assert asyncio.run(scenario()) == (False, True, True)


def test_a_task_late_to_end_is_named_with_where_it_waits(caplog: pytest.LogCaptureFixture) -> None:
    """`ib bot`'s stop: a task that has not ended some time after its cancel is named in the log with its
    chain of awaits, then waited for."""

    async def stubborn() -> None:
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:  # lets the cancel go, as wait_for on Python 3.11 could
            await asyncio.sleep(0.3)

    async def scenario() -> bool:
        late = asyncio.create_task(stubborn(), name="sender")
        prompt = asyncio.create_task(asyncio.sleep(60), name="events")
        await asyncio.sleep(0)
        await cancel_and_wait([late, prompt], grace=0.05)
        return late.done() and prompt.cancelled()

    with caplog.at_level(logging.WARNING, logger="bot.delivery.waiting"):
        assert asyncio.run(scenario())
    [said] = [r.getMessage() for r in caplog.records]
    assert said.startswith("the sender task has not ended 0.05 s after the stop; it waits at:\n")
    assert "in stubborn" in said and said.rstrip().endswith("in sleep")  # asyncio.sleep, awaited by stubborn
