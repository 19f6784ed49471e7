"""Escalation: answer-to-silence time across channels.

    .venv/bin/python -m bench.attention_bench [--samples N] [--repeat SECONDS]

The bot's escalation (bot/attention/escalation.py) runs in this process on the real Redis, repeating every
item at once and then every `--repeat` seconds on two channels: a DM through the fake Bot API (loopback HTTP,
python-telegram-bot's client) and a `json://` webhook on loopback delivered by apprise. Each sample raises a
permission, lets it be repeated on both channels at least twice, answers it at a random moment of the repeat
cycle (`AttentionStore.answer`, as `ib approve` does), and waits three more cycles. Answer-to-silence, per
channel: from the start of the answer to the last message of that item to arrive (0 when nothing arrives after
the answer began): only sends already under way can land after it.

Baseline, from the same run: one delivery on each channel on its own (send to arrival), the most that a
send under way can still take.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import time
from collections.abc import Callable

import redis
from telegram import Bot

from bench.common import REDIS_URL, percentile, scratch_namespace
from bot.attention.channels import Channel, load_channels
from bot.attention.escalation import Escalation
from bus.events.envelope import make_event
from bus.events.event_model import Event
from bus.events.streams import publish
from bus.inbox.attention import AttentionStore
from bus.inbox.attention_rules import Schedule
from bus.wire.keys import Keys
from tests.fake_telegram import FakeTelegram
from tests.json_inbox import JsonInbox

USER = 4242


def _ms(samples: list[float]) -> str:
    ms = [s * 1000 for s in samples]
    return f"p50 {percentile(ms, 50):6.1f} ms  p95 {percentile(ms, 95):6.1f} ms  max {max(ms):6.1f} ms"


async def _wait(check: Callable[[], bool], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise TimeoutError("the escalation did not deliver in time")
        await asyncio.sleep(0.005)


async def _baseline(
    bot: Bot, channel: Channel, fake: FakeTelegram, inbox: JsonInbox, n: int
) -> dict[str, list[float]]:
    """One delivery on each channel on its own: from the call to its arrival."""
    found: dict[str, list[float]] = {"dm": [], "webhook": []}
    for i in range(n):
        start = time.monotonic()
        await bot.send_message(USER, f"baseline {i}")
        found["dm"].append(fake.direct_arrivals(USER)[-1][0] - start)
        start = time.monotonic()
        await channel.deliver(f"baseline {i}", "body")
        found["webhook"].append(inbox.received[-1].at - start)
    return found


async def _sample(
    store: AttentionStore,
    rds: redis.Redis,
    keys: Keys,
    agent: str,
    fake: FakeTelegram,
    inbox: JsonInbox,
    repeat: float,
) -> tuple[float, float, int]:
    envelope = make_event("permission", f"{agent} asks to use Bash: ls", sender=agent, agent=agent)
    store.raise_for(Event.from_envelope({**envelope, "id": publish(rds, keys, envelope, 10_000)}))

    def dms() -> list[float]:
        return [at for at, text in fake.direct_arrivals(USER) if f"{agent} has" in text]

    def posts() -> list[float]:
        return [r.at for r in list(inbox.received) if f"{agent} has" in str(r.body.get("title"))]

    await _wait(lambda: len(dms()) >= 2 and len(posts()) >= 2)
    await asyncio.sleep(random.uniform(0, repeat))
    answered = time.monotonic()
    await asyncio.to_thread(store.answer, agent, "bench")
    await asyncio.sleep(3 * repeat)
    late = [at for at in dms() + posts() if at > answered]
    return (
        max([0.0, *(at - answered for at in dms())]),
        max([0.0, *(at - answered for at in posts())]),
        len(late),
    )


async def main_async(samples: int, repeat: float) -> None:
    with scratch_namespace() as namespace, FakeTelegram(limits=False) as fake, JsonInbox() as inbox:
        rds = redis.Redis.from_url(REDIS_URL, decode_responses=True)
        keys = Keys(namespace)
        store = AttentionStore(rds, keys)
        fake.start_private_chat(USER)
        bot = Bot(fake.token, base_url=fake.base_url)
        [channel] = load_channels(inbox.url)
        async with bot:
            baseline = await _baseline(bot, channel, fake, inbox, samples)
            schedule = Schedule(dm_after=0, channels_after=0, repeat=repeat)
            escalation = Escalation(store, schedule, bot, (USER,), [channel])
            runner = asyncio.create_task(escalation.run())
            dm, webhook, late = [], [], 0
            for i in range(samples):
                to_dm, to_webhook, after = await _sample(store, rds, keys, f"agent-{i}", fake, inbox, repeat)
                dm.append(to_dm)
                webhook.append(to_webhook)
                late += after
            runner.cancel()
        rds.close()
    print(f"escalation, answer-to-silence ({samples} answers, each level repeated every {repeat:g} s):")
    for name, found, alone in (
        ("DM (fake Bot API)", dm, "dm"),
        ("webhook (apprise json)", webhook, "webhook"),
    ):
        print(f"  {name:<23} {_ms(found)}   baseline, one on its own: {_ms(baseline[alone])}")
    print(f"  messages that arrived after the answer began: {late} (sends already under way)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--samples", type=int, default=30)
    parser.add_argument("--repeat", type=float, default=0.25, help="seconds between two repeats of a level")
    args = parser.parse_args()
    asyncio.run(main_async(args.samples, args.repeat))


if __name__ == "__main__":
    main()
