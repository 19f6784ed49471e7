"""`ib bot` / `python -m bot`: the Telegram bot, one asyncio loop running python-telegram-bot's
Application beside the bus consumer, the output feed and the sender.

`main` checks the settings and builds the pieces; `serve` runs them inside `async with application`
until SIGTERM or Ctrl-C.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import signal
import sys
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

import redis.asyncio as aredis
from redis.exceptions import RedisError
from telegram import Update
from telegram.error import BadRequest, InvalidToken, NetworkError, TelegramError
from telegram.ext import Application, ContextTypes, TypeHandler

from bot.attention.channels import load_channels
from bot.attention.escalation import Escalation, schedule_for
from bot.bot_runtime import RUNTIME_KEY, BotRuntime
from bot.config import BotConfig, bot_config
from bot.delivery.budget import SharedBudget
from bot.delivery.forum import Forum
from bot.delivery.outbound import Batch, Outbox
from bot.delivery.sender import Sender
from bot.delivery.status_lines import STATUS_EVERY
from bot.delivery.waiting import cancel_and_wait, wait_set
from bot.errors import BotError
from bot.feeds.consumer import EventConsumer
from bot.feeds.output_feed import OutputFeed
from bot.feeds.status_board import StatusBoard
from bot.feeds.worker_watch import watch_workers
from bot.handlers.agent_handlers import AGENT_HANDLERS
from bot.handlers.attention_handlers import ATTENTION_HANDLERS
from bot.handlers.chat_commands import COMMANDS
from bot.handlers.cost_handlers import COST_HANDLERS
from bot.handlers.gate import gate
from bot.handlers.limit_handlers import LIMIT_HANDLERS
from bot.handlers.plan_handlers import PLAN_HANDLERS
from bot.handlers.schedule_handlers import SCHEDULE_HANDLERS
from bot.handlers.task_handlers import TASK_HANDLERS
from bot.handlers.to_agents import RELAY_HANDLERS
from bot.handlers.topic_handlers import TOPIC_HANDLERS
from bot.review import approval
from bot.review.review import ReviewRecords
from bot.topics.topics import TopicRegistry
from bus.connection.clients import async_client_for, client_for, resolve_url
from bus.errors import BusError, ConfigError
from bus.events.streams import consumer_name
from bus.inbox.attention import AttentionStore
from bus.settings.secret_file import token_file_problem
from bus.settings.settings import Settings, load_settings
from bus.wire.keys import Keys

log = logging.getLogger(__name__)

POLL_TIMEOUT = 10
START_PAUSE_S, START_PAUSE_MAX_S = 1.0, 30.0  # Telegram not answering at the start: tried again after
HANDLERS = (  # in one group: the first that takes an update handles it, so the relay's come last
    *TOPIC_HANDLERS,
    *AGENT_HANDLERS,
    *TASK_HANDLERS,
    *PLAN_HANDLERS,
    *SCHEDULE_HANDLERS,
    *COST_HANDLERS,
    *ATTENTION_HANDLERS,
    *LIMIT_HANDLERS,
    *RELAY_HANDLERS,
)


async def on_error(update: object, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Log what a handler raised; the bot goes on."""
    log.error("handling update %r failed", update, exc_info=context.error)


def build_application(config: BotConfig) -> Application[Any, Any, Any, Any, Any, Any]:
    """The PTB application with the gate first (group -1), then the commands, the button taps and, last,
    the text and taps no other handler took (the relay's)."""
    application = (
        Application.builder()
        .token(config.token)
        .base_url(config.api_url)
        .base_file_url(config.file_url)
        .build()
    )
    application.add_handler(TypeHandler(Update, gate), group=-1)
    application.add_handlers(HANDLERS)
    application.add_error_handler(on_error)
    return application


def _async_redis(url: str, single: bool = False) -> aredis.Redis:
    """No socket timeout: the stream reads block in Redis; keepalive notices a dead server."""
    return async_client_for(url, single=single)


async def serve(config: BotConfig, url: str, settings: Settings, stop: asyncio.Event) -> None:
    """Run the bot until `stop` is set (or one of its tasks fails)."""
    keys = Keys(settings.namespace)
    client, reader, sync = _async_redis(url), _async_redis(url, single=True), client_for(url, blocking=True)
    application = build_application(config)
    registry = TopicRegistry(client, keys)
    await registry.load()
    forum = Forum(application.bot, config.chat_id)

    async def accepted(batch: Batch, message_id: int | None) -> None:
        await consumer.confirm(batch, message_id)
        await feed.confirm(batch, message_id)
        await board.confirm(batch, message_id)
        await reviews.confirm(batch, message_id)

    reviews = ReviewRecords(client, keys)
    budget = SharedBudget(client, keys, config.chat_id, config.limits)
    sender = Sender(forum, Outbox(config.limits), registry, accepted, budget)
    consumer = EventConsumer(client, keys, registry, forum, sender, f"bot-{consumer_name()}")
    feed = OutputFeed(client, reader, keys, registry, sender)
    board = StatusBoard(client, keys, sender, registry, every=config.limits.local_seconds(STATUS_EVERY) / 2)
    feed.observers.append(board.item)
    feed.observers.append(consumer.output_item)
    feed.repeats.append(consumer.repeats)
    feed.seeders.append(board.seed)
    consumer.observers.append(board.event)
    await board.load()
    application.bot_data[RUNTIME_KEY] = runtime = BotRuntime(
        config,
        keys,
        client,
        sync,
        registry,
        sender,
        forum,
        settings.events_maxlen,
        settings.schedule_min_interval,
        settings.write_wait,
        settings.prices,
        settings.day_limit,
    )
    consumer.notes = runtime.notes
    escalation = _escalation(application.bot, sync, keys, settings, config)
    try:
        if not await _meet_telegram(application, forum, stop):
            return
        async with application:  # initialized by _meet_telegram: entering calls Telegram no more
            await consumer.prepare()
            await approval.resume(runtime)  # its notes are open before the events that fold into them
            tasks = [
                _task(sender.run(), "sender"),
                _task(consumer.run(), "events"),
                _task(feed.run(), "output"),
                _task(board.run(), "status"),
                _task(watch_workers(sync, keys, settings.events_maxlen, settings.heartbeat_ttl), "workers"),
                _task(escalation.run(), "attention"),
            ]
            await application.start()
            assert application.updater is not None
            await application.updater.start_polling(
                timeout=POLL_TIMEOUT, allowed_updates=["message", "callback_query"]
            )
            log.info("bot serving chat %s for %d allowed users", config.chat_id, len(config.allowed_users))
            stopping = _task(stop.wait(), "stop")
            done, _ = await asyncio.wait([stopping, *tasks], return_when=asyncio.FIRST_COMPLETED)
            await application.updater.stop()
            await application.stop()
            await cancel_and_wait([stopping, *tasks])
            for task in done:
                if task is not stopping and not task.cancelled() and task.exception() is not None:
                    raise BotError(f"the bot's {task.get_name()} task failed: {task.exception()}")
    finally:
        await client.aclose()
        await reader.aclose()
        sync.close()


def _escalation(bot: Any, sync: Any, keys: Keys, settings: Settings, config: BotConfig) -> Escalation:
    """The repeater of unanswered "needs you" items: DMs to the allowed users, then the channels."""
    urls = settings.attention_channels.get_secret_value() if settings.attention_channels else ""
    channels = load_channels(urls)
    users = tuple(sorted(config.allowed_users))
    schedule = schedule_for(settings, len(users), len(channels))
    return Escalation(AttentionStore(sync, keys), schedule, bot, users, channels)


def _task(coroutine: Coroutine[Any, Any, Any], name: str) -> asyncio.Task[Any]:
    return asyncio.get_running_loop().create_task(coroutine, name=name)


async def _meet_telegram(
    application: Application[Any, Any, Any, Any, Any, Any], forum: Forum, stop: asyncio.Event
) -> bool:
    """The bot's first calls (getMe, setMyCommands), once Telegram answers them; False when stopped first."""
    if not await _when_telegram_answers(application.initialize, "its first call (getMe)", stop):
        return False
    if not await _when_telegram_answers(lambda: forum.register_commands(COMMANDS), "setMyCommands", stop):
        await application.shutdown()
        return False
    return True


async def _when_telegram_answers(
    call: Callable[[], Awaitable[object]], what: str, stop: asyncio.Event
) -> bool:
    """`call` once Telegram answers it: a timeout or a network failure at the start is waited out, more slowly
    each time (as the bot waits for Redis), not the end of the bot; a refusal (a bad token, a bad request)
    still is. False when stopped meanwhile."""
    pause = START_PAUSE_S
    while True:
        try:
            await call()
            return True
        except BadRequest:
            raise
        except NetworkError as e:  # TimedOut too; BadRequest is one, and was raised above
            log.warning("telegram: %s did not go through (%s); trying again in %.0f s", what, e, pause)
        if await wait_set(stop, pause):
            return False
        pause = min(pause * 2, START_PAUSE_MAX_S)


async def _serve_until_signalled(config: BotConfig, url: str, settings: Settings) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    await serve(config, url, settings, stop)


def run(verbose: bool = False, cwd: str | None = None) -> int:
    """Check the settings, then serve until stopped; a bad setting is one line on stderr and exit 1."""
    logging.basicConfig(
        level=logging.INFO if verbose else logging.WARNING, format="%(asctime)s %(name)s %(message)s"
    )
    logging.getLogger("httpx").setLevel(logging.WARNING)
    try:
        settings = load_settings(cwd)
        config = bot_config(settings)
        url = resolve_url(settings, cwd)  # the embedded bus keeps /.env out of git from its first start
        exposed = token_file_problem(cwd)
        if exposed:
            raise ConfigError(exposed)
    except (BotError, BusError) as e:
        print(f"ib bot: error: {e}", file=sys.stderr)
        return 1
    print(f"bot serving chat {config.chat_id} (Ctrl-C stops it)", flush=True)
    with contextlib.suppress(KeyboardInterrupt):
        try:
            asyncio.run(_serve_until_signalled(config, url, settings))
        except BotError as e:
            print(f"ib bot: error: {e}", file=sys.stderr)
            return 1
        except InvalidToken:  # its message quotes the token: not printed
            print("ib bot: error: Telegram refused IB_TELEGRAM_TOKEN; check the token", file=sys.stderr)
            return 1
        except TelegramError as e:
            print(f"ib bot: error: Telegram at {config.api_url} cannot be used: {e}", file=sys.stderr)
            return 1
        except RedisError as e:
            print(f"ib bot: error: Redis cannot be reached: {e}", file=sys.stderr)
            return 1
    return 0


def main(argv: list[str] | None = None) -> int:
    """`python -m bot [-v]`."""
    parser = argparse.ArgumentParser(prog="python -m bot", description="The ittybus Telegram bot.")
    parser.add_argument("-v", "--verbose", action="store_true", help="log every event shown and command")
    return run(parser.parse_args(argv).verbose)
