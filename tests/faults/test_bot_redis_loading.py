"""The bot while its restarted Redis loads its data: Redis answers CLIENT ID then but refuses reads
(LOADING), so a task that took CLIENT ID for "back" said "connected to Redis again" and "lost the
connection" over and over until the data was in (bench.scale_bench --restart-redis found five pairs of the
output feed at 1,000 agents). Each task says each line once."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

from bus.wire.keys import Keys
from tests.bot_process import BotProcess, bot_env
from tests.cli import IbRunner
from tests.fake_telegram import FakeTelegram
from tests.redis_server import RedisServer
from tests.waiting import retry_until

FILLER = 20_000  # keys Redis reads back at its start, each KEY_LOAD_DELAY µs: seconds of LOADING
KEY_LOAD_DELAY = "200"
WHO = ("events", "output")  # the bot's tasks that block on a read: each meets the outage


@pytest.mark.timeout(240)
def test_each_task_of_the_bot_says_once_that_it_is_back_after_redis_loaded(
    ib: IbRunner, own_redis: RedisServer, fake: FakeTelegram, tmp_path: Path
) -> None:
    ib.env["IB_REDIS_URL"] = own_redis.url
    keys = Keys(ib.env["IB_NAMESPACE"])
    client = own_redis.client()
    pipe = client.pipeline(transaction=False)
    for n in range(FILLER):
        pipe.set(f"filler:{n}", "x")
    pipe.execute()
    client.hset(keys.topics("agent"), "agent-1", str(fake.create_topic("agent-1")))  # the output feed reads
    bot = BotProcess(ib, fake, tmp_path / "bot.log", bot_env(fake))
    bot.start()
    try:
        retry_until(
            lambda: any(c.get("cmd") == "xread" for c in client.client_list()), 30, 0.05, "the output feed"
        )
        client.close()
        own_redis.stop(signal.SIGTERM)
        own_redis.args += ["--key-load-delay", KEY_LOAD_DELAY]
        own_redis.start()  # returns once Redis answers PING: its data is in
        retry_until(
            lambda: all(_said(bot, f"{who}: connected to Redis again") for who in WHO),
            60,
            0.1,
            "each task back",
        )
        assert bot.proc is not None and bot.proc.poll() is None, bot.log.read_text()
    finally:
        bot.stop()
    log = bot.log.read_text()
    for who in WHO:
        said = (_said(bot, f"{who}: lost the connection"), _said(bot, f"{who}: connected to Redis again"))
        assert said == (1, 1), (who, said, log)


def _said(bot: BotProcess, line: str) -> int:
    return bot.log.read_text().count(line)
