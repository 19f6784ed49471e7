"""What each agent with a topic is doing, kept up to date from its output items and its events, and
handed to the sender as the topic's live status line.

The source is the agent's output stream (`out:<agent>`), which the bot reads anyway for the agent's
output: tool uses carry the tool and its argument, every item the transcript's time. A turn starts
with a `prompt` item and ends with a turn-ending event (complete, waiting, ...); then the line is
removed. The two streams are read apart: what happened when, not what was read first, decides
(bot.feeds.agent_status). A tick refreshes the elapsed times of working agents; idle ones cost nothing.

The status messages shown are kept in `topic:status` (thread → message id), so a restarted bot edits
or deletes the one its predecessor left instead of leaving it behind; and an agent it meets mid-turn
gets its line from the tail of its output stream up to where the bot stands, and its state.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import cast

import redis.asyncio as aredis
from redis.exceptions import RedisError

from bot.delivery.outbound import Batch
from bot.delivery.sender import Sender
from bot.feeds.agent_status import AgentStatus, on_event, on_item, seeded, status_line
from bot.render.render import escape
from bot.topics.topics import TopicRegistry
from bus.events.event_model import Event
from bus.stores.agent_store import Agent
from bus.wire.keys import Keys

log = logging.getLogger(__name__)

SHOWN = "status"  # topic:status — thread → message id of its status line
SEED_ITEMS = 200  # output items read back for an agent met mid-turn


class StatusBoard:
    def __init__(
        self,
        client: aredis.Redis,
        keys: Keys,
        sender: Sender,
        registry: TopicRegistry,
        every: float,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.client = client
        self.keys = keys
        self.sender = sender
        self.registry = registry
        self.every = every  # seconds between two refreshes of the elapsed times; a turn gets its line
        # once it is two of them old (a status line in a turn of a few seconds is churn: sent, then
        # moved below the turn's first output, then deleted)
        self.clock = clock
        self.statuses: dict[str, AgentStatus] = {}  # every agent heard of, with a topic or not (yet)
        self._met: set[str] = set()  # agents whose output the feed reads
        self._left: dict[int, int] = {}  # status messages an earlier bot left in agents' topics
        self._live: set[str] = set()  # agents whose line changes as time passes: refreshed each `every`

    async def load(self) -> None:
        """The status messages an earlier bot left: the sender will change or delete them. Those in an
        agent's topic wait until `seed` knows what the agent does, so they are not deleted first."""
        shown = cast(dict[str, str], await self.client.hgetall(self.keys.topics(SHOWN)))
        for thread, message_id in shown.items():
            if not (thread.lstrip("-").isdigit() and message_id.isdigit()):
                continue
            if any(kind == "agent" for kind, _key in self.registry.bound_to(int(thread))):
                self._left[int(thread)] = int(message_id)
            else:
                self.sender.adopt_status(int(thread), int(message_id))

    async def seed(self, agent: str, cursor: str) -> None:
        """An agent met for the first time, its output read on from `cursor`: what it was doing then."""
        if cursor not in ("0", "0-0") and agent not in self._met:
            tail = await self.client.xrevrange(self.keys.output(agent), max=cursor, min="-", count=SEED_ITEMS)
            state = str(await self.client.hget(self.keys.agent(agent), Agent.hash_key("state")) or "")
            fields = [f for _id, f in reversed(cast(list[tuple[str, dict[str, str]]], tail))]
            known = self.statuses.get(agent, AgentStatus())
            self._keep(agent, seeded(known, fields, state, self.clock()))
        self._met.add(agent)
        thread = self.registry.thread_of("agent", agent)
        left = self._left.pop(thread, None) if thread is not None else None
        if thread is not None and left is not None:
            self.sender.adopt_status(thread, left)
        if agent in self.statuses:
            self._show(agent)

    async def confirm(self, batch: Batch, message_id: int | None) -> None:
        """Keep `topic:status` in step with the status messages Telegram shows."""
        if batch.status is None or batch.thread is None:
            return
        key, thread = self.keys.topics(SHOWN), str(batch.thread)
        try:
            if batch.delete is not None:
                if await self.client.hget(key, thread) == str(batch.delete):
                    await self.client.hdel(key, thread)
            elif batch.edit is None and message_id is not None:
                await self.client.hset(key, thread, str(message_id))
        except RedisError as e:  # a restarted bot may then leave this status message behind
            log.warning("status line of topic %s shown, but not recorded: %s", thread, e)

    def item(self, agent: str, fields: dict[str, str]) -> None:
        """One output item of `agent` (an `out:<agent>` entry), in stream order."""
        self._update(agent, on_item(self.statuses.get(agent, AgentStatus()), fields, self.clock()))

    def event(self, event: Event) -> None:
        """An event of an agent, in the events' order (not the output's: either may come first)."""
        if event.agent:
            self._update(
                event.agent, on_event(self.statuses.get(event.agent, AgentStatus()), event, self.clock())
            )

    def _update(self, agent: str, status: AgentStatus) -> None:
        if status != self.statuses.get(agent):
            self._keep(agent, status)
            self._show(agent)

    def _keep(self, agent: str, status: AgentStatus) -> None:
        self.statuses[agent] = status
        if status.live:
            self._live.add(agent)
        else:
            self._live.discard(agent)

    def _show(self, agent: str) -> None:
        thread = self.registry.thread_of("agent", agent)
        if thread is None:
            return
        line = status_line(self.statuses[agent], self.clock(), young=2 * self.every)
        self.sender.set_status(thread, escape(line))

    async def run(self) -> None:
        while True:
            await asyncio.sleep(self.every)
            for agent in list(self._live):  # not every agent heard of: 10,000 took 40 ms a refresh
                self._show(agent)
