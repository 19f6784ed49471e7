"""The bot while its Redis restarts (SIGTERM, and kill -9): it keeps running; events it read and had not
yet had accepted by Telegram when Redis went away (pending in its group), and events published after the
restart, each reach the Bot API fake once; its log says the bus was lost and came back without a
traceback."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest
import redis

from bot.feeds.consumer import GROUP
from bus.events.envelope import make_event
from bus.events.streams import publish
from bus.wire.keys import Keys
from tests.bot_process import BotProcess, bot_env
from tests.cli import IbRunner
from tests.fake_telegram import FakeTelegram
from tests.faults.tally import Tally
from tests.integration.test_bot import bind_project, shown
from tests.redis_server import RedisServer, hung_up_on
from tests.waiting import retry_until

RESTARTS, EACH, SPOOLED = 2, 6, 3
KNOCKS = 20  # connections tried while Redis is away (its tasks', over a few seconds of back-off)
LOST_LINE = "events: lost the connection to Redis"
PROJECT = "restarts"
WHO = ("events", "workers", "telegram budget")  # the bot's tasks that read Redis and say when they lose it


def _times_shown(text: str, message: str) -> int:
    return sum(1 for line in text.splitlines() if line.endswith(f"completed: {message}"))


@pytest.mark.timeout(300)
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL], ids=["sigterm", "kill-9"])
def test_bot_outlives_redis_restarts(
    ib: IbRunner, own_redis: RedisServer, fake: FakeTelegram, tmp_path: Path, tally: Tally, sig: int
) -> None:
    ib.env["IB_REDIS_URL"] = own_redis.url
    keys = Keys(ib.env["IB_NAMESPACE"])
    bot = BotProcess(ib, fake, tmp_path / "bot.log", bot_env(fake))
    bot.start()
    sent: list[str] = []
    pending_at_stop = 0
    try:
        thread = bind_project(fake, PROJECT)
        for round_ in range(RESTARTS):
            client = own_redis.client()
            fake.hold_messages()  # what the bot reads now stays unaccepted (unacknowledged) as Redis goes
            sent += _publish(client, keys, f"before{round_}")
            retry_until(lambda: _pending(client, keys) >= EACH, 30, 0.05, "the bot to read them")  # noqa: B023
            pending_at_stop += _pending(client, keys)
            client.close()
            own_redis.stop(sig)
            with hung_up_on(own_redis.port) as knocks:
                for i in range(SPOOLED):  # sent while Redis is away: spooled, flushed once it is back
                    done = ib.run("notify", "--project", PROJECT, f"during{round_}-{i}")
                    assert done.returncode == 0 and "kept in" in done.stderr, done.stderr
                    sent.append(f"during{round_}-{i}")
                retry_until(lambda: _said(bot, LOST_LINE) > round_, 60, 0.1, "the bot to notice")  # noqa: B023
                retry_until(lambda: knocks.count >= KNOCKS, 60, 0.05, "the bot to try again and again")
            own_redis.start()
            fake.release_messages()
            assert ib.run("spool", "--flush").returncode == 0
            client = own_redis.client()
            sent += _publish(client, keys, f"after{round_}")
            retry_until(lambda: _all_shown(fake, thread, sent), 90, 0.1, "all shown")  # noqa: B023
            retry_until(lambda: _pending(client, keys) == 0, 60, 0.1, "every event acknowledged")  # noqa: B023
            client.close()
        assert bot.proc is not None and bot.proc.poll() is None, bot.log.read_text()
        # a task that polls (the workers' watch) may meet the last outage only now, after the events came
        # through: let each one that lost the connection get it back before the bot stops
        retry_until(
            lambda: all(
                _said(bot, f"{who}: lost the connection") == _said(bot, f"{who}: connected to Redis again")
                for who in WHO
            ),
            60,
            0.1,
            "each task connected again",
        )
    finally:
        bot.stop()
    log = bot.log.read_text()
    assert "Traceback" not in log, log
    for who in WHO:  # each task that met the outage says so once
        lost, again = (
            _said(bot, f"{who}: lost the connection"),
            _said(bot, f"{who}: connected to Redis again"),
        )
        assert lost == again <= RESTARTS and (lost == RESTARTS or who != "events"), (who, log)
    text = shown(fake, thread)
    name = "SIGTERM" if sig == signal.SIGTERM else "kill -9"
    row = tally.count(
        f"Redis restarted {RESTARTS}× ({name}, AOF) under the bot (`test_bot_outlives_redis.py`): "
        f"at each stop {EACH} events read, not yet accepted by Telegram; {SPOOLED} notifies while down; "
        f"{EACH} after",
        sent,
        [m for m in sent for _ in range(_times_shown(text, m))],
        note=f"the bot kept running; {pending_at_stop} pending at the stops; one 'lost' and one 'again' line "
        "per restart",
    )
    assert (row.lost, row.twice) == (0, 0)


def _publish(client: redis.Redis, keys: Keys, prefix: str) -> list[str]:
    texts = [f"{prefix}-{i}" for i in range(EACH)]
    for text in texts:
        publish(client, keys, make_event("complete", text, project=PROJECT), 10_000)
    return texts


def _all_shown(fake: FakeTelegram, thread: int, sent: list[str]) -> bool:
    text = shown(fake, thread)
    return all(_times_shown(text, t) for t in sent)


def _pending(client: redis.Redis, keys: Keys) -> int:
    return int(client.xpending(keys.events, GROUP)["pending"])


def _said(bot: BotProcess, line: str) -> int:
    return bot.log.read_text().count(line)
