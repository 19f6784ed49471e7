"""The bot's outbound pacer beside python-telegram-bot's AIORateLimiter, on the same burst.

    .venv/bin/python -m bench.pacer_bench                 # both scenarios
    .venv/bin/python -m bench.pacer_bench --chats 4 --each 10

A burst of CHATS x EACH messages (200 by default: 20 in each of 10 chats), all queued at once, goes to
the fake Bot API, one fake per chat (the fake holds one forum chat), in real time (no scaled clock: PTB
sleeps a 429's retry_after in real seconds). Each fake keeps Telegram's limits: one message a second
per chat with a burst of 3, and 20 a minute in a group.

- ours: `bot.delivery.sender.Sender` draining an `Outbox` with Telegram's limits as `bot.delivery.pacing`
  knows them (one Sender per chat, as `ib bot` runs one for its forum); items are not mergeable, so every one
  is one sendMessage call, as with PTB.
- PTB: `ExtBot` with `AIORateLimiter(max_retries=MAX_RETRIES)` (its default limits: 30 a second
  overall, 20 a minute per group); the chat's messages are sent concurrently (`asyncio.gather`),
  which is how a caller hands a burst to it. One limiter per chat: the fakes share a chat id. Again
  with `max_retries=0`, PTB's default, where a 429 reaches the caller: those messages count as lost.

Scenarios: "limits as known" (the fake's limits are the ones both model) and "429s" (the fake allows
only STRICT_PER_MINUTE a minute, fewer than both believe, so each chat is answered 429 with a
retry_after and must wait for it). Printed per scenario and limiter: wall time until the last message
was accepted, messages a second per chat (median over chats), 429 answers received, messages
delivered, messages lost, and chats whose messages arrived out of the order they were queued.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import logging
import statistics
import time
from collections.abc import Awaitable, Callable, Coroutine, Iterator
from contextlib import ExitStack, contextmanager, suppress
from dataclasses import dataclass, field
from typing import Any

import redis.asyncio as aredis
from telegram import Bot
from telegram.error import TelegramError
from telegram.ext import AIORateLimiter, ExtBot
from telegram.request import HTTPXRequest

from bench.common import REDIS_URL, scratch_namespace
from bot.delivery.forum import Forum
from bot.delivery.outbound import Batch, Outbox, Outgoing
from bot.delivery.pacing import Limits as PacerLimits
from bot.delivery.sender import Sender
from bot.topics.topics import TopicRegistry
from bus.wire.keys import Keys
from tests.fake_telegram import FakeTelegram, Limits

MAX_RETRIES = 5  # PTB's default is 0: a 429 then reaches the caller and the message is not sent
STRICT_PER_MINUTE = 15
HEAD_ORDER = "out of order"
DEADLINE = 300.0  # seconds: a run that has not delivered everything by then is reported as it stands


@dataclass
class Outcome:
    wall: float = 0.0
    per_chat_rate: list[float] = field(default_factory=list)
    rejected_429: int = 0
    delivered: int = 0
    lost: int = 0
    out_of_order: int = 0


@contextmanager
def fakes(chats: int, limits: Limits) -> Iterator[list[FakeTelegram]]:
    with ExitStack() as stack:
        yield [stack.enter_context(FakeTelegram(limits=True, rates=limits)) for _ in range(chats)]


def _request() -> HTTPXRequest:
    return HTTPXRequest(connection_pool_size=64, pool_timeout=DEADLINE)


def _texts(chat: int, each: int) -> list[str]:
    return [f"chat {chat} message {n}" for n in range(each)]


def _measure(servers: list[FakeTelegram], each: int, done_at: list[float], wall: float) -> Outcome:
    outcome = Outcome(wall=wall)
    for chat, server in enumerate(servers):
        shown = [m.source or m.text for m in server.messages(None) if m.sender_id == server.bot_id]
        outcome.delivered += len(shown)
        outcome.rejected_429 += server.rejected_429
        outcome.out_of_order += int(shown != [t for t in _texts(chat, each) if t in shown])
        if done_at[chat] > 0:
            outcome.per_chat_rate.append(each / done_at[chat])
    outcome.lost = len(servers) * each - outcome.delivered
    return outcome


async def ours(servers: list[FakeTelegram], each: int) -> Outcome:
    """One Sender per chat, its outbox holding the chat's burst, until every message was accepted."""
    done_at = [0.0] * len(servers)
    remaining = [each] * len(servers)
    finished = asyncio.Event()
    start = time.monotonic()

    def accepted_in(chat: int) -> Callable[[Batch, int | None], Awaitable[None]]:
        async def accepted(batch: Batch, message_id: int | None) -> None:
            remaining[chat] -= 1
            if remaining[chat] == 0:
                done_at[chat] = time.monotonic() - start
                if not any(remaining):
                    finished.set()

        return accepted

    with scratch_namespace() as namespace:
        client = aredis.Redis.from_url(REDIS_URL, decode_responses=True)  # topic repairs only: unused here
        senders, bots = [], []
        for chat, server in enumerate(servers):
            bot = Bot(server.token, base_url=server.base_url, request=_request())
            await bot.initialize()
            bots.append(bot)
            outbox = Outbox(PacerLimits())
            sender = Sender(
                Forum(bot, server.chat_id), outbox, TopicRegistry(client, Keys(namespace)), accepted_in(chat)
            )
            for text in _texts(chat, each):
                sender.put(Outgoing(server.chat_id, None, text, mergeable=False))
            senders.append(sender)
        start = time.monotonic()
        tasks = [asyncio.create_task(s.run()) for s in senders]
        with suppress(TimeoutError):  # reported as it stands
            await asyncio.wait_for(finished.wait(), DEADLINE)
        wall = time.monotonic() - start
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        for bot in bots:
            await bot.shutdown()
        await client.aclose()
    return _measure(servers, each, done_at, wall)


async def ptb(servers: list[FakeTelegram], each: int, retries: int = MAX_RETRIES) -> Outcome:
    """ExtBot with AIORateLimiter, each chat's burst sent at once; errors left after its retries count
    as lost."""
    done_at = [0.0] * len(servers)
    bots = []
    for server in servers:
        bot: ExtBot[int] = ExtBot(
            server.token,
            base_url=server.base_url,
            request=_request(),
            rate_limiter=AIORateLimiter(max_retries=retries),
        )
        await bot.initialize()
        bots.append(bot)
    start = time.monotonic()

    async def one_chat(chat: int) -> None:
        bot, server = bots[chat], servers[chat]
        results = await asyncio.gather(
            *(bot.send_message(server.chat_id, text) for text in _texts(chat, each)), return_exceptions=True
        )
        if not any(isinstance(r, TelegramError) for r in results):
            done_at[chat] = time.monotonic() - start

    with suppress(TimeoutError):  # reported as it stands
        await asyncio.wait_for(asyncio.gather(*(one_chat(c) for c in range(len(servers)))), DEADLINE)
    wall = time.monotonic() - start
    for bot in bots:
        await bot.shutdown()
    return _measure(servers, each, done_at, wall)


def _row(name: str, o: Outcome) -> str:
    rate = statistics.median(o.per_chat_rate) if o.per_chat_rate else 0.0
    return (
        f"  {name:<22}{o.wall:>8.1f} s{rate:>12.2f}{o.rejected_429:>7}{o.delivered:>11}{o.lost:>6}"
        f"{o.out_of_order:>14}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--chats", type=int, default=10)
    parser.add_argument("--each", type=int, default=20, help="messages per chat")
    args = parser.parse_args()
    logging.getLogger("bot").setLevel(logging.ERROR)  # the sender's line per 429: counted in the table
    logging.getLogger("telegram").setLevel(logging.CRITICAL)  # PTB's traceback per message it gives up
    scenarios = {
        "limits as known (1/s per chat, burst 3, 20/min)": Limits(),
        f"429s (the fake allows {STRICT_PER_MINUTE}/min, both believe 20)": Limits(
            per_minute=STRICT_PER_MINUTE
        ),
    }
    print(f"{args.chats} chats x {args.each} messages, queued at once; real time")
    for title, limits in scenarios.items():
        print(f"\n{title}")
        print(
            f"  {'':<22}{'wall':>10}{'msg/s/chat':>12}{'429s':>7}{'delivered':>11}{'lost':>6}{HEAD_ORDER:>14}"
        )
        runs: list[tuple[str, Callable[[list[FakeTelegram], int], Coroutine[Any, Any, Outcome]]]] = [
            ("ours (bot.sender)", ours),
            (f"PTB AIORateLimiter({MAX_RETRIES})", ptb),
            ("PTB AIORateLimiter(0)", functools.partial(ptb, retries=0)),
        ]
        for name, run in runs:
            with fakes(args.chats, limits) as servers:
                outcome = asyncio.run(run(servers, args.each))
            print(_row(name, outcome), flush=True)


if __name__ == "__main__":
    main()
