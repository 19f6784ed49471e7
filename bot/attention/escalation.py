"""Escalation: a "needs you" nobody answered is repeated as a direct message to each allowed user, then
through the configured channels (bot.attention.channels), on the schedule of IB_ATTENTION_*
(bus.inbox.attention_rules), until it is answered anywhere.

Each delivery is taken in Redis before it is sent (bus.inbox.attention): taken only while the item is open,
and marked done after; a bot that dies in between lets the lease run out and the delivery is taken again
(at least once). Nothing is taken after the answer, so what follows an answer is at most the sends
already under way.
"""

from __future__ import annotations

import asyncio
import html
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

import redis
from telegram import Bot
from telegram.constants import ParseMode
from telegram.error import Forbidden, TelegramError

from bot.attention.channels import Channel, check_reachable
from bus.connection.reconnect import LOST, Outage
from bus.inbox.attention import LEASE_MS, AttentionStore, Item
from bus.inbox.attention_rules import CHANNELS, DM, Schedule, due, next_round_in, one_per_agent, reminder
from bus.settings.settings import Settings

log = logging.getLogger(__name__)

RESCAN = 1.0  # seconds between two looks for new items, however far the next round is
Send = Callable[[Item, float], Awaitable[bool]]


def schedule_for(settings: Settings, users: int, channels: int) -> Schedule:
    """The schedule of these settings; a level with nobody to send to is left out."""
    return Schedule(
        dm_after=settings.attention_dm_after if users else None,
        channels_after=settings.attention_channels_after if channels else None,
        repeat=settings.attention_repeat,
    )


@dataclass
class Escalation:
    store: AttentionStore
    schedule: Schedule
    bot: Bot
    users: tuple[int, ...]
    channels: list[Channel]
    lease_ms: int = LEASE_MS  # how long a delivery taken by a bot that died stays its own
    failed: set[str] = field(default_factory=set)  # users and channels whose failure was said once

    async def run(self) -> None:
        """Check the channels once, then repeat what stays unanswered, until cancelled. Redis away is
        said once and waited out; the items wait in Redis meanwhile."""
        await check_reachable(self.channels)
        outage = Outage("attention")
        while True:
            try:
                wait = await self.tick()
                if said := outage.back():
                    log.warning("%s", said)
            except LOST as e:
                if said := outage.lost(e):
                    log.warning("%s", said)
                wait = outage.pause
            except redis.RedisError as e:
                log.warning("attention: reading the open items failed (retrying in %.1fs): %s", RESCAN, e)
                wait = RESCAN
            await asyncio.sleep(wait)

    async def tick(self) -> float:
        """Deliver every round that is due; the seconds until the next one (at most RESCAN)."""
        items, now = await asyncio.to_thread(self._open)
        items = one_per_agent(items)  # one reminder per agent and round, however many kinds it raised
        sends = []
        for item in items:
            age = now - item.raised_at
            done = await asyncio.to_thread(self.store.delivered_to, item.id)
            for due_round in due(self.schedule, age):
                for name, send in self._targets(due_round.level):
                    target = due_round.target(name)
                    if target not in done:
                        sends.append(self._deliver(item, target, send, age))
        await asyncio.gather(*sends)
        waits = [next_round_in(self.schedule, now - item.raised_at) for item in items]
        return min([w for w in waits if w is not None] + [RESCAN])

    def _open(self) -> tuple[list[Item], float]:
        return self.store.open_items(), self.store.now()

    def _targets(self, level: str) -> list[tuple[str, Send]]:
        if level == DM:
            return [(str(user), self._direct(user)) for user in self.users]
        if level == CHANNELS:
            return [(c.name, self._channel(c)) for c in self.channels]
        return []

    async def _deliver(self, item: Item, target: str, send: Send, age: float) -> None:
        if not await asyncio.to_thread(self.store.take, item.id, target, self.lease_ms):
            return  # answered, or another bot has it
        if await send(item, age):
            await asyncio.to_thread(self.store.delivered, item.id, target)
            log.info("attention %s of %s: delivered to %s", item.id, item.agent, target)
        # not delivered: its lease runs out and the next tick takes it again

    def _direct(self, user: int) -> Send:
        async def send(item: Item, age: float) -> bool:
            title, body = reminder(item.kind, item.agent, item.msg, age)
            text = f"<b>{html.escape(title)}</b>\n{html.escape(body)}"
            try:
                await self.bot.send_message(user, text, parse_mode=ParseMode.HTML)
            except Forbidden as e:
                why = "they must open a chat with the bot once (Start) to get reminders"
                self._once(item, f"dm:{user}", f"cannot message user {user} ({e}); {why}")
                return False
            except TelegramError as e:
                self._once(item, f"dm:{user}", f"messaging user {user} failed ({e}); tried again later")
                return False
            return True

        return send

    def _channel(self, channel: Channel) -> Send:
        async def send(item: Item, age: float) -> bool:
            title, body = reminder(item.kind, item.agent, item.msg, age)
            if await channel.deliver(title, body):
                return True
            self._once(
                item,
                f"channel:{channel.number}",
                f"channel {channel.number} ({channel.shown}) did not take it; tried again later",
            )
            return False

        return send

    def _once(self, item: Item, target: str, problem: str) -> None:
        """One line per user or channel that fails, however often (and for however many items) it is
        tried again."""
        if target not in self.failed:
            self.failed.add(target)
            log.warning("attention %s of %s: %s", item.id, item.agent, problem)
