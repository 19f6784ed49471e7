"""The fake Telegram Bot API, driven by a real python-telegram-bot `Bot` over HTTP.

Each test starts its own fake on a free port; PTB is async, so each test runs one coroutine with
`asyncio.run`.
"""

from __future__ import annotations

import asyncio
import datetime as dt
from collections.abc import Awaitable, Callable

import pytest
from telegram import Bot, InlineKeyboardButton, InlineKeyboardMarkup, ReactionTypeEmoji, Update
from telegram.error import BadRequest, Conflict, InvalidToken, RetryAfter
from telegram.ext import Application, ContextTypes, MessageHandler, filters

from tests.fake_telegram import FakeTelegram, Limits
from tests.waiting import retry_until

USER = 4242


pytestmark = pytest.mark.fake_telegram(limits=False)


def run_bot(fake: FakeTelegram, script: Callable[[Bot], Awaitable[object]], token: str | None = None) -> None:
    """Run `script` with a PTB Bot pointed at the fake (initialised: it has called getMe)."""

    async def main() -> None:
        bot = Bot(token or fake.token, base_url=fake.base_url, base_file_url=fake.base_file_url)
        async with bot:
            await script(bot)

    asyncio.run(main())


def keyboard(*pairs: tuple[str, str]) -> InlineKeyboardMarkup:
    return InlineKeyboardMarkup([[InlineKeyboardButton(label, callback_data=data) for label, data in pairs]])


def test_send_shows_the_text_a_person_sees(fake: FakeTelegram) -> None:
    async def script(bot: Bot) -> None:
        assert bot.username == "ittybus_test_bot"
        topic = await bot.create_forum_topic(fake.chat_id, "agent-1 [backend]")
        sent = await bot.send_message(
            fake.chat_id,
            "❓ agent-1 asks: &lt;which&gt; <b>DB</b> &amp; why?",
            parse_mode="HTML",
            message_thread_id=topic.message_thread_id,
            reply_markup=keyboard(("Postgres", "a:q-1:0"), ("SQLite", "a:q-1:1")),
        )
        assert sent.text == "❓ agent-1 asks: <which> DB & why?"
        assert sent.message_thread_id == topic.message_thread_id
        await bot.send_message(fake.chat_id, "in General")

    run_bot(fake, script)
    topic = fake.find_topic("agent-1 [backend]")
    assert topic is not None
    (message,) = fake.messages(topic.thread_id)
    assert message.text == "❓ agent-1 asks: <which> DB & why?"
    assert message.source == "❓ agent-1 asks: &lt;which&gt; <b>DB</b> &amp; why?"
    assert message.buttons == [[("Postgres", "a:q-1:0"), ("SQLite", "a:q-1:1")]]
    assert fake.topic_texts(None) == ["in General"]
    assert fake.sent == 2


def test_edits_keep_history_and_identical_edits_are_refused(fake: FakeTelegram) -> None:
    async def script(bot: Bot) -> None:
        sent = await bot.send_message(fake.chat_id, "step 1", reply_markup=keyboard(("Look", "l:agent-1")))
        await bot.edit_message_text(
            "step 1\nstep 2", fake.chat_id, sent.message_id, reply_markup=keyboard(("Look", "l:agent-1"))
        )
        with pytest.raises(BadRequest, match=r"(?i)message is not modified"):
            await bot.edit_message_text(
                "step 1\nstep 2", fake.chat_id, sent.message_id, reply_markup=keyboard(("Look", "l:agent-1"))
            )
        # Like Telegram: an edit that does not repeat the keyboard removes it.
        await bot.edit_message_text("step 1\nstep 2\nstep 3", fake.chat_id, sent.message_id)
        with pytest.raises(BadRequest, match=r"(?i)message to edit not found"):
            await bot.edit_message_text("x", fake.chat_id, 999_999)

    run_bot(fake, script)
    (message,) = fake.messages(None)
    assert message.text == "step 1\nstep 2\nstep 3"
    assert message.edits == ["step 1", "step 1\nstep 2"]
    assert message.buttons == []


LENGTHS = [
    ("4096-plain", "a" * 4096, None, True),
    ("4097-plain", "a" * 4097, None, False),
    ("markup-not-counted", "<b>" + "a" * 4096 + "</b>", "HTML", True),
    ("entities-count-once", "&amp;" * 4096, "HTML", True),
    ("astral-counts-two", "😀" * 2049, None, False),
]


@pytest.mark.parametrize(
    ("text", "parse_mode", "accepted"), [r[1:] for r in LENGTHS], ids=[r[0] for r in LENGTHS]
)
def test_message_length_limit(fake: FakeTelegram, text: str, parse_mode: str | None, accepted: bool) -> None:
    async def script(bot: Bot) -> None:
        if accepted:
            await bot.send_message(fake.chat_id, text, parse_mode=parse_mode)
        else:
            with pytest.raises(BadRequest, match=r"(?i)message is too long"):
                await bot.send_message(fake.chat_id, text, parse_mode=parse_mode)

    run_bot(fake, script)
    assert fake.sent == (1 if accepted else 0)


REFUSED = [
    ("callback-data-65-bytes", {"reply_markup": keyboard(("x", "d:" + "a" * 63))}, "button_data_invalid"),
    ("callback-data-64-bytes-ok", {"reply_markup": keyboard(("x", "d:" + "a" * 62))}, None),
    ("callback-data-multibyte", {"reply_markup": keyboard(("x", "é" * 33))}, "button_data_invalid"),
    ("unknown-tag", {"text": "<blink>x</blink>", "parse_mode": "HTML"}, 'unsupported start tag "blink"'),
    ("unescaped-less-than", {"text": "a < b", "parse_mode": "HTML"}, "can't parse entities"),
    ("unclosed-tag", {"text": "<b>bold", "parse_mode": "HTML"}, "can't find end tag"),
    ("crossed-tags", {"text": "<b><i>x</b></i>", "parse_mode": "HTML"}, "unmatched end tag"),
    ("only-markup", {"text": "<b> </b>", "parse_mode": "HTML"}, "message text is empty"),
    ("unknown-thread", {"message_thread_id": 987_654}, "message thread not found"),
    ("other-chat", {"chat_id": -100999}, "chat not found"),
    ("reply-to-nothing", {"reply_to_message_id": 987_654}, "message to be replied not found"),
]


@pytest.mark.parametrize(("overrides", "error"), [r[1:] for r in REFUSED], ids=[r[0] for r in REFUSED])
def test_what_telegram_refuses(fake: FakeTelegram, overrides: dict[str, object], error: str | None) -> None:
    async def script(bot: Bot) -> None:
        kwargs: dict[str, object] = {"chat_id": fake.chat_id, "text": "hello"} | overrides
        if error is None:
            await bot.send_message(**kwargs)  # type: ignore[arg-type]
            return
        with pytest.raises(BadRequest) as caught:
            await bot.send_message(**kwargs)  # type: ignore[arg-type]
        assert error in str(caught.value).lower()

    run_bot(fake, script)


def test_topics_create_rename_close_reopen_delete(fake: FakeTelegram) -> None:
    async def script(bot: Bot) -> None:
        topic = await bot.create_forum_topic(fake.chat_id, "write-tests [backend]")
        thread = topic.message_thread_id
        await bot.send_message(fake.chat_id, "before", message_thread_id=thread)
        await bot.edit_forum_topic(fake.chat_id, thread, name="write-tests [backend] ✓")
        with pytest.raises(BadRequest, match=r"(?i)topic_not_modified"):
            await bot.edit_forum_topic(fake.chat_id, thread, name="write-tests [backend] ✓")
        await bot.close_forum_topic(fake.chat_id, thread)
        with pytest.raises(BadRequest, match=r"(?i)topic_closed"):
            await bot.send_message(fake.chat_id, "while closed", message_thread_id=thread)
        with pytest.raises(BadRequest, match=r"(?i)topic_not_modified"):
            await bot.close_forum_topic(fake.chat_id, thread)
        await bot.reopen_forum_topic(fake.chat_id, thread)
        await bot.send_message(fake.chat_id, "after", message_thread_id=thread)
        assert fake.topic_texts(thread) == ["before", "after"]
        await bot.delete_forum_topic(fake.chat_id, thread)
        with pytest.raises(BadRequest, match=r"(?i)message thread not found"):
            await bot.send_message(fake.chat_id, "gone", message_thread_id=thread)
        with pytest.raises(BadRequest, match=r"(?i)topic_id_invalid"):
            await bot.reopen_forum_topic(fake.chat_id, thread)
        with pytest.raises(BadRequest, match=r"(?i)topic_name_invalid"):
            await bot.create_forum_topic(fake.chat_id, "x" * 129)

    run_bot(fake, script)
    assert fake.topics() == []
    (deleted,) = fake.topics(include_deleted=True)
    assert deleted.name == "write-tests [backend] ✓"
    assert fake.topic_texts(deleted.thread_id) == []


def test_delete_react_chat_action_commands_and_documents(fake: FakeTelegram) -> None:
    async def script(bot: Bot) -> None:
        thread = (await bot.create_forum_topic(fake.chat_id, "agent-2 [backend]")).message_thread_id
        first = await bot.send_message(fake.chat_id, "first", message_thread_id=thread)
        second = await bot.send_message(fake.chat_id, "second", message_thread_id=thread)
        assert await bot.delete_message(fake.chat_id, first.message_id)
        with pytest.raises(BadRequest, match=r"(?i)message to delete not found"):
            await bot.delete_message(fake.chat_id, first.message_id)
        await bot.set_message_reaction(fake.chat_id, second.message_id, ReactionTypeEmoji("👍"))
        await bot.send_chat_action(fake.chat_id, "typing", message_thread_id=thread)
        await bot.set_my_commands([("auto", "Run the task queue"), ("stop", "Stop auto mode")])
        doc = await bot.send_document(
            fake.chat_id,
            b"diff --git a/x b/x\n",
            filename="agent-2.diff",
            caption="diff of agent-2",
            message_thread_id=thread,
        )
        assert doc.document is not None
        file = await bot.get_file(doc.document.file_id)
        assert bytes(await file.download_as_bytearray()) == b"diff --git a/x b/x\n"

    run_bot(fake, script)
    topic = fake.find_topic("agent-2 [backend]")
    assert topic is not None
    shown = fake.messages(topic.thread_id)
    assert [m.text for m in shown] == ["second", "diff of agent-2"]
    assert shown[0].reactions == ["👍"]
    assert fake.chat_actions == [(topic.thread_id, "typing")]
    assert fake.commands() == [
        {"command": "auto", "description": "Run the task queue"},
        {"command": "stop", "description": "Stop auto mode"},
    ]
    (document,) = fake.documents()
    assert (document.file_name, document.content) == ("agent-2.diff", b"diff --git a/x b/x\n")


def test_updates_carry_injected_messages_and_button_presses(fake: FakeTelegram) -> None:
    thread = fake.create_topic("backend")

    async def script(bot: Bot) -> None:
        question = await bot.send_message(
            fake.chat_id,
            "❓ Which DB?",
            message_thread_id=thread,
            reply_markup=keyboard(("Postgres", "a:q-1:0")),
        )
        fake.inject_message(USER, "/auto --worktrees", thread_id=thread)
        fake.inject_message(USER, "Postgres, please", thread_id=thread, reply_to=question.message_id)
        fake.inject_callback(USER, question.message_id, "a:q-1:0")
        fake.inject_callback(USER, question.message_id, "forged:data")

        updates = await bot.get_updates(timeout=5)
        assert len(updates) == 4
        command, reply, press, forged = updates
        assert command.message is not None and command.message.text == "/auto --worktrees"
        assert command.message.message_thread_id == thread
        assert command.message.from_user is not None and command.message.from_user.id == USER
        # Telegram quirk kept: a plain message in a topic "replies" to the topic's opening service message.
        assert command.message.reply_to_message is not None
        assert command.message.reply_to_message.forum_topic_created is not None
        assert reply.message is not None and reply.message.reply_to_message is not None
        assert reply.message.reply_to_message.message_id == question.message_id
        assert press.callback_query is not None and press.callback_query.data == "a:q-1:0"
        assert press.callback_query.message is not None
        assert press.callback_query.message.message_id == question.message_id
        assert forged.callback_query is not None and forged.callback_query.data == "forged:data"

        assert await press.callback_query.answer("Sent to agent-1")
        with pytest.raises(BadRequest, match=r"(?i)query is too old"):
            await bot.answer_callback_query(press.callback_query.id)

        # The offset confirms what was read; nothing is delivered twice.
        assert await bot.get_updates(offset=forged.update_id + 1, timeout=0) == ()
        assert fake.pending_updates() == 0

    run_bot(fake, script)
    assert [(a.text, a.show_alert) for a in fake.callback_answers] == [("Sent to agent-1", False)]
    assert fake.topic_texts(thread) == ["❓ Which DB?", "/auto --worktrees", "Postgres, please"]


def test_a_long_poll_wakes_up_for_an_update(fake: FakeTelegram) -> None:
    async def script(bot: Bot) -> None:
        poll = asyncio.create_task(bot.get_updates(timeout=30, read_timeout=40))
        await asyncio.to_thread(retry_until, lambda: fake.calls("getUpdates") == 1, 10.0, 0.01, "the poll")
        fake.inject_message(USER, "wake up")
        (update,) = await poll
        assert update.message is not None and update.message.text == "wake up"

    run_bot(fake, script)


def test_a_second_poller_ends_the_first_with_a_conflict(fake: FakeTelegram) -> None:
    async def script(bot: Bot) -> None:
        first = asyncio.create_task(bot.get_updates(timeout=30, read_timeout=40))
        await asyncio.to_thread(
            retry_until, lambda: fake.calls("getUpdates") == 1, 10.0, 0.01, "the first poll"
        )
        async with Bot(fake.token, base_url=fake.base_url) as other_instance:
            second = asyncio.create_task(other_instance.get_updates(timeout=30, read_timeout=40))
            with pytest.raises(Conflict):
                await first
            fake.inject_message(USER, "for the second")
            assert len(await second) == 1

    run_bot(fake, script)


def test_a_wrong_token_is_unauthorized(fake: FakeTelegram) -> None:
    with pytest.raises(InvalidToken):
        run_bot(fake, lambda bot: bot.get_me(), token="999:wrong")


def test_flood_limit_per_chat_answers_429_with_retry_after(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PTB_TIMEDELTA", "1")  # RetryAfter.retry_after as a timedelta, without a warning
    with FakeTelegram(time_scale=0.001) as fake:  # the clock all but stands still: only advance() moves it

        async def script(bot: Bot) -> None:
            for i in range(3):  # the burst
                await bot.send_message(fake.chat_id, f"burst {i}")
            with pytest.raises(RetryAfter) as caught:
                await bot.send_message(fake.chat_id, "one too many")
            assert isinstance(caught.value.retry_after, dt.timedelta)
            assert caught.value.retry_after >= dt.timedelta(seconds=1)
            fake.advance(1)
            await bot.send_message(fake.chat_id, "after the wait")

        run_bot(fake, script)
        assert fake.topic_texts(None) == ["burst 0", "burst 1", "burst 2", "after the wait"]
        assert (fake.sent, fake.rejected_429) == (4, 1)


def test_twenty_messages_a_minute_per_group(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PTB_TIMEDELTA", "1")
    with FakeTelegram(rates=Limits(per_second=1000, burst=1000, per_minute=20)) as fake:

        async def script(bot: Bot) -> None:
            for i in range(20):
                await bot.send_message(fake.chat_id, f"m{i}")
            with pytest.raises(RetryAfter) as caught:
                await bot.send_message(fake.chat_id, "m20")
            retry_after = caught.value.retry_after
            assert isinstance(retry_after, dt.timedelta)
            assert dt.timedelta(seconds=1) < retry_after <= dt.timedelta(seconds=60)
            fake.advance(60)
            await bot.send_message(fake.chat_id, "m20")

        run_bot(fake, script)
        assert (fake.sent, fake.rejected_429) == (21, 1)


def test_a_scaled_clock_lets_a_minute_of_limits_pass_in_seconds(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PTB_TIMEDELTA", "1")
    # At 30x a minute of Telegram time lasts 2 real seconds; retry_after is in Telegram seconds, as
    # Telegram states it, so a client on the same scaled clock sleeps retry_after / 30.
    with FakeTelegram(time_scale=30, rates=Limits(per_second=1000, burst=1000, per_minute=3)) as fake:

        async def script(bot: Bot) -> None:
            for i in range(3):
                await bot.send_message(fake.chat_id, f"m{i}")
            with pytest.raises(RetryAfter) as caught:
                await bot.send_message(fake.chat_id, "m3")
            retry_after = caught.value.retry_after
            assert isinstance(retry_after, dt.timedelta)
            assert dt.timedelta(seconds=30) < retry_after <= dt.timedelta(seconds=60)
            await asyncio.sleep(retry_after.total_seconds() / 30)  # honour it on the scaled clock
            await bot.send_message(fake.chat_id, "m3")

        run_bot(fake, script)
        assert (fake.sent, fake.rejected_429) == (4, 1)


def test_edits_count_towards_the_limits_like_messages(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PTB_TIMEDELTA", "1")
    with FakeTelegram(time_scale=0.001, rates=Limits(per_second=1000, burst=1000, per_minute=4)) as fake:
        buttons = InlineKeyboardMarkup([[InlineKeyboardButton("Look", callback_data="l:a")]])

        async def script(bot: Bot) -> None:
            first = await bot.send_message(fake.chat_id, "one", reply_markup=buttons)
            await bot.edit_message_text("two", fake.chat_id, first.message_id, reply_markup=buttons)
            await bot.edit_message_reply_markup(fake.chat_id, first.message_id, reply_markup=None)
            await bot.send_message(fake.chat_id, "three")
            with pytest.raises(RetryAfter):
                await bot.edit_message_text("four", fake.chat_id, first.message_id)
            with pytest.raises(RetryAfter):
                await bot.send_message(fake.chat_id, "four")
            fake.advance(60)
            await bot.edit_message_text("four", fake.chat_id, first.message_id)

        run_bot(fake, script)
        assert fake.topic_texts(None) == ["four", "three"]
        assert (fake.sent, fake.edited, fake.rejected_429) == (2, 3, 2)


def test_limits_switched_off() -> None:
    with FakeTelegram(limits=False) as fake:

        async def script(bot: Bot) -> None:
            for i in range(30):
                await bot.send_message(fake.chat_id, f"m{i}")

        run_bot(fake, script)
        assert (fake.sent, fake.rejected_429) == (30, 0)


def test_an_application_polls_the_fake(fake: FakeTelegram) -> None:
    thread = fake.create_topic("backend")
    seen: list[tuple[int | None, str]] = []

    async def record(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        """Keep what arrived and answer in the same topic."""
        assert update.message is not None and update.message.text is not None
        seen.append((update.message.message_thread_id, update.message.text))
        await update.message.reply_text(f"got {update.message.text}")

    async def main() -> None:
        app = (
            Application.builder()
            .token(fake.token)
            .base_url(fake.base_url)
            .base_file_url(fake.base_file_url)
            .build()
        )
        app.add_handler(MessageHandler(filters.TEXT, record))
        async with app:
            await app.start()
            assert app.updater is not None
            await app.updater.start_polling(timeout=1)
            fake.inject_message(USER, "hello", thread_id=thread)
            await asyncio.to_thread(
                retry_until, lambda: len(fake.topic_texts(thread)) == 2, 10.0, 0.02, "the reply"
            )
            await app.updater.stop()
            await app.stop()

    asyncio.run(main())
    assert seen == [(thread, "hello")]
    assert fake.topic_texts(thread) == ["hello", "got hello"]


def test_send_photo_keeps_the_png_and_refuses_what_telegram_refuses(fake: FakeTelegram) -> None:
    from worker.tmux.screenshot import render_png

    png = render_png("\x1b[32mok\x1b[0m\n", 10, 2)

    async def script(bot: Bot) -> None:
        thread = (await bot.create_forum_topic(fake.chat_id, "agent-3")).message_thread_id
        sent = await bot.send_photo(
            fake.chat_id,
            png,
            filename="agent-3.png",
            caption="<b>agent-3</b>",
            parse_mode="HTML",
            message_thread_id=thread,
        )
        assert sent.photo and sent.photo[-1].width > 10 and sent.caption == "agent-3"
        with pytest.raises(BadRequest, match=r"(?i)image_process_failed"):
            await bot.send_photo(fake.chat_id, b"not a picture", filename="x.png", message_thread_id=thread)

    run_bot(fake, script)
    topic = fake.find_topic("agent-3")
    assert topic is not None
    (shown,) = fake.messages(topic.thread_id)
    assert shown.photo is not None and shown.photo.content == png and shown.text == "agent-3"
