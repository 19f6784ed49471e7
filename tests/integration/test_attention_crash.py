"""At least once, never after the answer: a bot that dies with a delivery on its way, before marking it,
has it sent again by the next bot once its lease runs out; a delivery marked done is never sent again."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

import redis
from telegram import Bot

from bot.attention.channels import load_channels
from bot.attention.escalation import Escalation
from bus.events.envelope import make_event
from bus.events.event_model import Event
from bus.events.streams import publish
from bus.inbox.attention import AttentionStore
from bus.inbox.attention_rules import Schedule
from bus.wire.keys import Keys
from tests.json_inbox import JsonInbox

LEASE_MS = 300
TIMEOUT = 30.0


async def _until(check: Callable[[], bool], what: str, escalation: Escalation | None = None) -> None:
    """Wait for `check()` (a condition on the loopback webhook) without blocking the loop; with
    `escalation`, running its ticks meanwhile, as its loop would."""
    deadline = time.monotonic() + TIMEOUT
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        if escalation is not None:
            await escalation.tick()
        await asyncio.sleep(0.02)


def test_a_delivery_cut_off_by_a_crash_is_sent_again_once(rds: redis.Redis, keys: Keys) -> None:
    envelope = make_event("permission", "agent-1 asks to use Bash: ls", sender="agent-1", agent="agent-1")
    store = AttentionStore(rds, keys)
    item = store.raise_for(Event.from_envelope({**envelope, "id": publish(rds, keys, envelope, 1000)}))
    assert item is not None
    schedule = Schedule(dm_after=None, channels_after=0)

    with JsonInbox() as inbox:

        def bot() -> Escalation:
            channels = load_channels(inbox.url)
            return Escalation(store, schedule, Bot("1:unused"), (), channels, lease_ms=LEASE_MS)

        async def scenario() -> None:
            inbox.hold()
            dying = asyncio.create_task(bot().tick())
            await _until(lambda: inbox.arriving == 1, "the send to be under way")
            dying.cancel()  # the bot dies: the message is on its way, its delivery not marked
            inbox.release()
            await _until(lambda: len(inbox.titles()) == 1, "the first copy")
            assert store.delivered_to(item.id) == set()
            second = (
                bot()
            )  # (while the dead bot's lease holds the delivery, it is not taken: test_attention_store)
            await _until(lambda: len(inbox.titles()) == 2, "the copy after the lease", second)
            assert store.delivered_to(item.id) == {"channels:0:1"}
            await second.tick()
            store.answer("agent-1", "ib approve")
            await bot().tick()
            assert len(inbox.titles()) == 2

        asyncio.run(scenario())
