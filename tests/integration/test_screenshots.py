"""Pane screenshots for real: a fake agent in tmux, `ib look --png`, the worker's `screenshot` command on the
bus, and /shot and the Screenshot button in Telegram (the fake Bot API records the sendPhoto)."""

from __future__ import annotations

import io
from pathlib import Path

import redis
from PIL import Image

from bus.commands.worker_commands import TakeScreenshot
from bus.commands.worker_rpc import request
from bus.wire.keys import Keys
from tests.bot_process import USER, BotProcess, Worker
from tests.cli import IbRunner
from tests.fake_telegram import FakeTelegram
from tests.integration.test_bot import bot_messages, spawn, wait_agent_topic, wait_shown
from tests.reads import pane_text
from tests.waiting import retry_until


def test_look_png_and_the_gone_agent(agents_ib: IbRunner, tmp_path: Path) -> None:
    spawn(agents_ib, "painter", "fake: say Painting the shed 🎨 漢字 in green.", "fake: wait")
    retry_until(lambda: "Painting" in pane_text(agents_ib, "painter"), 30, 0.1, "the agent's text")
    out = tmp_path / "painter.png"
    done = agents_ib.run("look", "painter", "--png", str(out))
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"{out}: 200×50 screen of painter, ")
    image = Image.open(io.BytesIO(out.read_bytes()))
    assert image.format == "PNG" and image.size[0] > image.size[1] > 300
    assert len(image.getcolors(1_000_000) or []) > 5  # text in several colours, not one flat rectangle

    unwritable = agents_ib.run("look", "painter", "--png", str(tmp_path / "no" / "such" / "dir.png"))
    assert unwritable.returncode == 1 and "cannot write" in unwritable.stderr
    agents_ib.run("kill", "painter", "--force")
    gone = agents_ib.run("look", "painter", "--png", str(out))
    assert gone.returncode == 1 and gone.stderr.count("\n") == 1, gone.stderr
    assert "Traceback" not in gone.stderr


def test_shot_in_telegram_and_the_button(
    agents_ib: IbRunner,
    bot: BotProcess,
    fake: FakeTelegram,
    running_worker: Worker,
    rds: redis.Redis,
    keys: Keys,
) -> None:
    worker = agents_ib.env["IB_WORKER_ID"]
    bot.env["IB_WORKER_ID"] = worker
    bot.start()
    spawn(agents_ib, "sketcher", "fake: say Drawing.", "fake: done")
    topic = wait_agent_topic(fake, "sketcher")
    wait_shown(fake, topic, "sketcher completed", timeout=40)
    answer = request(rds, keys, worker, TakeScreenshot(agent="sketcher"), timeout=30)
    assert (answer["agent"], answer["width"], answer["height"]) == ("sketcher", 200, 50)

    fake.inject_message(USER, "/shot", thread_id=topic)
    photo = retry_until(lambda: [m for m in bot_messages(fake, topic) if m.photo], 30, 0.1, "a photo")[0]
    assert photo.text == "sketcher · 200×50" and photo.photo is not None
    assert Image.open(io.BytesIO(photo.photo.content)).format == "PNG"

    done = next(m for m in bot_messages(fake, topic) if "completed" in m.text)
    shot_button = next(data for label, data in done.buttons[0] if label == "Screenshot")
    fake.inject_callback(USER, done.message_id, shot_button)
    retry_until(
        lambda: len([m for m in bot_messages(fake, topic) if m.photo]) == 2, 30, 0.1, "a second photo"
    )

    agents_ib.run("kill", "sketcher", "--force")
    fake.inject_message(USER, "/shot sketcher", thread_id=topic)
    wait_shown(fake, topic, "⚠ no agent 'sketcher'", timeout=60)  # a deadline only: the bot asks the worker
