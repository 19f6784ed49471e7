"""What one front end had and the other lacked: `ib reply` and `ib esc` on the CLI; /send, /questions,
/pause and /resume in Telegram — against fake agents in tmux and a real worker."""

from __future__ import annotations

import json
from pathlib import Path

from tests.bot_process import USER, BotProcess, Worker
from tests.cli import IbRunner
from tests.fake_telegram import FakeTelegram
from tests.integration.test_bot import bind_project, received, spawn, wait_shown
from tests.reads import pending_questions
from tests.waiting import retry_until


def test_cli_answer_and_esc(agents_ib: IbRunner, tmp_path: Path) -> None:
    spawn(agents_ib, "asker", "fake: ask Postgres or SQLite?", "fake: wait")
    question = retry_until(lambda: pending_questions(agents_ib), 30, 0.2, "asked")[0]
    done = agents_ib.run("reply", question["id"], "SQLite,", "please")
    assert done.returncode == 0 and f"answered {question['id']}: sent to asker" in done.stdout, done.stderr
    retry_until(lambda: "SQLite, please" in received(tmp_path), 30, 0.1, "the answer in the agent")
    assert json.loads(agents_ib.run("questions", "--json").stdout) == []
    again = agents_ib.run("reply", question["id"], "again")
    assert again.returncode == 1 and again.stderr.count("\n") == 1
    esc = agents_ib.run("esc", "asker")
    assert esc.returncode == 0 and esc.stdout.strip() == "Escape sent to asker"
    gone = agents_ib.run("esc", "nobody")
    assert gone.returncode == 1 and "nobody" in gone.stderr


def test_telegram_send_questions_pause_resume(
    agents_ib: IbRunner, bot: BotProcess, fake: FakeTelegram, running_worker: Worker, tmp_path: Path
) -> None:
    bot.env["IB_WORKER_ID"] = agents_ib.env["IB_WORKER_ID"]
    bot.start()
    thread = bind_project(fake, "repo")
    spawn(agents_ib, "helper", "fake: ask Which colour?", "fake: wait")
    retry_until(lambda: pending_questions(agents_ib), 30, 0.2, "asked")
    fake.inject_message(USER, "/questions", thread_id=thread)
    wait_shown(fake, thread, "· helper · 0 min ago: Which colour?")
    fake.inject_message(USER, "/send helper paint it green", thread_id=thread)
    wait_shown(fake, thread, "✓ sent to helper")
    retry_until(lambda: "paint it green" in received(tmp_path), 30, 0.1, "the text in the agent")
    fake.inject_message(USER, "/pause helper", thread_id=thread)
    wait_shown(fake, thread, "⏸ paused helper")
    fake.inject_message(USER, "/resume helper", thread_id=thread)
    wait_shown(fake, thread, "▶ resumed helper")
    fake.inject_message(USER, "/send helper", thread_id=thread)
    wait_shown(fake, thread, "usage: /send AGENT TEXT")
