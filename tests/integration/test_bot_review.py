"""Review from the phone for real: a fake agent commits a change, /diff in its topic sends the file list and
one picture per file (rendered by its worker); replies to pictures are gathered and Request changes sends
them to the agent as one prompt naming each file and lines; Request changes with nothing gathered, a
picture whose record expired and one whose file changed since are each said."""

from __future__ import annotations

import io
from pathlib import Path

import redis
from PIL import Image

from bus.wire.keys import Keys
from tests.bot_process import USER, BotProcess, Worker
from tests.cli import IbRunner
from tests.fake_telegram import FakeTelegram
from tests.fake_telegram.forum import FakeMessage
from tests.integration.test_bot import (
    bot_messages,
    received,
    spawn,
    wait_agent_topic,
    wait_shown,
)
from tests.waiting import retry_until


def _photos(fake: FakeTelegram, topic: int) -> list[FakeMessage]:
    return [m for m in bot_messages(fake, topic) if m.photo]


def test_diff_pictures_and_replies_reach_the_agent_as_one_prompt(
    agents_ib: IbRunner,
    bot: BotProcess,
    fake: FakeTelegram,
    running_worker: Worker,
    rds: redis.Redis,
    keys: Keys,
    tmp_path: Path,
) -> None:
    bot.env["IB_WORKER_ID"] = agents_ib.env["IB_WORKER_ID"]
    bot.start()
    spawn(
        agents_ib,
        "reviewed",
        "fake: write calc.py def add(a, b):\\n    return a + b",
        "fake: write notes.txt first\\nsecond",
        "fake: commit add and notes",
        "fake: wait",
    )
    topic = wait_agent_topic(fake, "reviewed")
    wait_shown(fake, topic, "⏳ reviewed is waiting", timeout=40)

    fake.inject_message(USER, "/diff", thread_id=topic)
    wait_shown(fake, topic, "reviewed changed 2 files (+4 −0)", "+2 −0  calc.py (added)", timeout=60)
    photos = retry_until(lambda: len(_photos(fake, topic)) == 2 and _photos(fake, topic), 60, 0.1, "2 photos")
    assert [p.text for p in photos] == ["📄 calc.py · lines 1–2", "📄 notes.txt · lines 1–2"]
    assert photos[0].photo is not None and Image.open(io.BytesIO(photos[0].photo.content)).format == "PNG"

    listing = next(m for m in bot_messages(fake, topic) if "reviewed changed 2 files" in m.text)
    assert [label for label, _ in listing.buttons[0]] == ["✓ Approve → merge queue", "✎ Request changes"]
    request_changes = listing.buttons[0][1][1]
    fake.inject_callback(USER, listing.message_id, request_changes)  # nothing gathered yet
    wait_shown(fake, topic, "⚠ no comments on reviewed's change to send", "Nothing was sent.", timeout=30)

    fake.inject_message(USER, "Use sum() here", thread_id=topic, reply_to=photos[0].message_id)
    wait_shown(fake, topic, "✍ 1 comment waiting for reviewed", timeout=30)
    fake.inject_message(USER, "Say why\non two lines", thread_id=topic, reply_to=photos[1].message_id)
    wait_shown(fake, topic, "✍ 2 comments waiting for reviewed", timeout=30)
    assert "Use sum() here" not in received(tmp_path)  # gathered, not sent one by one

    rds.delete(keys.review_shown(photos[1].message_id))  # as if its record had expired
    fake.inject_message(USER, "and this?", thread_id=topic, reply_to=photos[1].message_id)
    wait_shown(fake, topic, "⚠ that picture is older than 3 days", "nothing was sent")

    fake.inject_callback(USER, listing.message_id, request_changes)
    wait_shown(fake, topic, "✎ Changes requested from reviewed: 2 comments sent as one prompt.", timeout=30)
    prompt = (
        "Changes requested on your work (2 comments from the review of your diff):\n"
        "1. about `calc.py` (lines 1–2 as shown): Use sum() here\n"
        "2. about `notes.txt` (lines 1–2 as shown): Say why\n"
        "   on two lines\n"
        "Address each of them, then commit."
    )
    retry_until(lambda: prompt in received(tmp_path), 30, 0.1, "the comments in the agent, as one prompt")
    assert "and this?" not in received(tmp_path)
    assert rds.llen(keys.review_comments("reviewed")) == 0

    steps = "fake: write calc.py def add(a, b):\\n    return sum((a, b))\nfake: commit use sum\nfake: wait"
    fake.inject_message(USER, steps, thread_id=topic)
    retry_until(lambda: "sum((a, b))" in agents_ib.run("diff", "reviewed").stdout, 60, 0.2, "the new commit")
    fake.inject_message(USER, "still?", thread_id=topic, reply_to=photos[0].message_id)
    wait_shown(fake, topic, "⚠ calc.py changed since that picture was sent: the comment is kept", timeout=30)
    fake.inject_callback(USER, listing.message_id, request_changes)
    stale = "1. about `calc.py` (lines 1–2 as shown; the file has changed since): still?"
    retry_until(lambda: stale in received(tmp_path), 30, 0.1, "the stale comment, said to be")

    big = "fake: run seq 1 10000 > big.txt\nfake: commit ten thousand lines\nfake: wait"
    fake.inject_message(USER, big, thread_id=topic)
    retry_until(lambda: "+10000" in agents_ib.run("review", "reviewed").stdout, 60, 0.2, "the big commit")
    fake.inject_message(USER, "/diff", thread_id=topic)
    wait_shown(fake, topic, "reviewed changed 3 files (+10004 −0)", "Too big for pictures", timeout=60)
    document = retry_until(
        lambda: [
            m for m in bot_messages(fake, topic) if m.document and m.document.file_name == "reviewed.diff"
        ],
        60,
        0.1,
        "the diff as a document",
    )[0]
    assert document.document is not None and document.document.content.count(b"\n+") >= 10000
    assert len(_photos(fake, topic)) == 2  # no picture of the big change, never a message per line

    fake.inject_message(USER, "never mind", thread_id=topic, reply_to=photos[0].message_id)
    wait_shown(fake, topic, "1 comment waiting for reviewed", timeout=30)
    approve = fake.inject_callback(USER, listing.message_id, listing.buttons[0][0][1])
    wait_shown(fake, topic, "✓ reviewed approved", "1 comment(s) not sent", timeout=30)
    popup = next(a for a in fake.callback_answers if a.query_id == approve)
    assert popup.text == "reviewed is in the merge queue, position 1"
    assert rds.llen(keys.review_comments("reviewed")) == 0
