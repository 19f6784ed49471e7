"""A Kill's note against Telegram's flood limit: its edits wait the limit out, and its last word (the
teardown's outcome) reaches the topic even when the edit never goes."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import redis.asyncio as aredis
from telegram import Bot

from bot.delivery.forum import Forum
from bot.delivery.outbound import Batch, Outbox
from bot.delivery.pacing import Limits
from bot.delivery.sender import MAX_NOW_TRIES, Sender
from bot.delivery.teardown_note import TeardownNotes
from bot.topics.topics import TopicRegistry
from bus.wire.keys import Keys
from tests.bot_process import SCALE
from tests.fake_telegram import FakeTelegram

Said = list[tuple[int | None, str, int | None]]


async def _never_accepted(_batch: Batch, _message_id: int | None) -> None:
    raise AssertionError("a note goes outside the outbox")


async def _with_notes(fake: FakeTelegram, script: Callable[[TeardownNotes], Awaitable[None]]) -> Said:
    said: Said = []
    async with Bot(fake.token, base_url=fake.base_url) as bot:
        forum = Forum(bot, fake.chat_id)
        registry = TopicRegistry(aredis.Redis(), Keys("ibtest:unused:"))  # not read: notes make no topics
        sender = Sender(forum, Outbox(Limits().scaled(SCALE)), registry, _never_accepted)
        notes = TeardownNotes(sender, lambda thread, html, reply_to: said.append((thread, html, reply_to)))
        await script(notes)
    return said


def test_the_last_edit_waits_out_a_flood_limit(fake: FakeTelegram) -> None:
    topic = fake.create_topic("doomed [repo]")

    async def script(notes: TeardownNotes) -> None:
        await notes.open("doomed", topic, None, "✗ Killing doomed…")
        fake.hold_messages()  # Telegram answers 429 for a while: a burst of other edits spent the minute
        asyncio.get_running_loop().call_later(0.15, fake.release_messages)
        await notes.close("doomed", "✗ Killed doomed")

    said = asyncio.run(_with_notes(fake, script))
    (note,) = fake.messages(topic)
    assert note.text == "✗ Killed doomed"
    assert fake.rejected_429 >= 1
    assert said == []


def test_an_edit_refused_for_good_is_said_as_a_message_of_its_own(fake: FakeTelegram) -> None:
    topic = fake.create_topic("doomed [repo]")

    async def script(notes: TeardownNotes) -> None:
        await notes.open("doomed", topic, 7, "✗ Killing doomed…")
        fake.hold_messages()
        await notes.close("doomed", "✗ Killed doomed")

    said = asyncio.run(_with_notes(fake, script))
    assert fake.rejected_429 == MAX_NOW_TRIES
    assert [m.text for m in fake.messages(topic)] == ["✗ Killing doomed…"]
    assert said == [(topic, "✗ Killed doomed", 7)]
