"""Scheduled tasks from Telegram: /schedule, /schedules and /unschedule against the fake Bot API."""

from __future__ import annotations

import redis

from bus.wire.keys import Keys
from tests.bot_process import USER, BotProcess
from tests.fake_telegram import FakeTelegram
from tests.integration.test_bot import bind_project, wait_shown


def test_schedule_list_and_delete_from_the_project_topic(
    bot: BotProcess, fake: FakeTelegram, rds: redis.Redis, keys: Keys
) -> None:
    bot.start()
    thread = bind_project(fake, "backend")
    fake.inject_message(USER, "/schedule 0 9 * * mon-fri Audit the logs -p 3", thread_id=thread)
    wait_shown(fake, thread, '+ sched-1  0 9 * * mon-fri  → "Audit the logs" [backend] next ')
    fake.inject_message(USER, "/schedule * * * * * * Every second", thread_id=thread)
    wait_shown(
        fake, thread, "⚠ bad cron expression '* * * * * *': 6 fields (a seconds field) is not supported"
    )
    fake.inject_message(USER, "/schedule 0 0 30 2 * Never", thread_id=thread)
    wait_shown(fake, thread, "never fires (no such day)")
    fake.inject_message(USER, "/schedules", thread_id=thread)
    wait_shown(fake, thread, 'sched-1  0 9 * * mon-fri  → "Audit the logs" [backend] next ')
    assert rds.zcard(keys.schedules) == 1
    fake.inject_message(USER, "/unschedule sched-1", thread_id=thread)
    wait_shown(fake, thread, "✗ deleted sched-1; the tasks it added stay")
    fake.inject_message(USER, "/unschedule sched-1", thread_id=thread)
    wait_shown(fake, thread, "⚠ no schedule sched-1")
    fake.inject_message(USER, "/schedules", thread_id=thread)
    wait_shown(fake, thread, "No schedules for backend: add one with /schedule CRON TITLE")
