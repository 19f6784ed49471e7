"""Agents' output in their topics: reads the `out:<agent>` streams of every agent that has a topic and
queues each item for the topic's streaming message (edited in place, then a new one). A `prompt` item
(the agent was given a new turn) starts a new message at the bottom of the topic.

One blocking XREAD over all those streams on a connection of its own; when a topic is bound, the read
is cut short (CLIENT UNBLOCK) so the new agent's stream joins at once. The last item Telegram accepted
per agent is kept in `topic:output`, so a restart goes on from there.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any, cast

import redis.asyncio as aredis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError
from redis.exceptions import TimeoutError as RedisTimeoutError

from bot.delivery.outbound import Batch
from bot.delivery.sender import Sender
from bot.render.streaming import output_item
from bot.topics.topics import TopicRegistry
from bus.connection.reconnect import Outage
from bus.wire.keys import Keys

log = logging.getLogger(__name__)

OFFSETS = "output"  # topic:output — agent → id of the last output item Telegram accepted
BLOCK_MS = 30_000
READ_COUNT = 500
TOKEN_PREFIX = "o"
UNBLOCK_TRIES = 100


class OutputFeed:
    def __init__(
        self, client: aredis.Redis, reader: aredis.Redis, keys: Keys, registry: TopicRegistry, sender: Sender
    ) -> None:
        self.client = client
        self.reader = reader  # a single connection: the one CLIENT UNBLOCK cuts short
        self.keys = keys
        self.registry = registry
        self.sender = sender
        self.cursors: dict[str, str] = {}
        self.observers: list[Callable[[str, dict[str, str]], None]] = []  # (agent, item), once it is queued
        self.repeats: list[Callable[[str, dict[str, str]], bool]] = []  # (agent, item): shown already?
        self.seeders: list[Callable[[str, str], Awaitable[None]]] = []  # (agent, cursor), for new agents
        self._changed = asyncio.Event()
        self._reader_id: int | None = None
        self._reading = False
        self._generation = 0
        self._wakers: set[asyncio.Task[None]] = set()
        registry.on_change(self.wake)

    def wake(self) -> None:
        """The bound agents changed: start a new read that includes them."""
        self._changed.set()
        if self._reading:
            task = asyncio.get_running_loop().create_task(self._unblock(self._generation))
            self._wakers.add(task)
            task.add_done_callback(self._wakers.discard)

    async def _unblock(self, generation: int) -> None:
        """Cut the current read short; it may not have reached Redis yet, so try until it has."""
        for _ in range(UNBLOCK_TRIES):
            if not self._reading or generation != self._generation or self._reader_id is None:
                return
            try:
                if await self.client.client_unblock(self._reader_id):
                    return
            except RedisError as e:
                log.debug("output: could not cut the read short: %s", e)
                return
            await asyncio.sleep(0.01)

    async def run(self) -> None:
        outage = Outage("output")
        while True:
            try:
                if self._reader_id is None:
                    # PING first: a restarted Redis answers CLIENT ID while it loads its data, and refuses
                    # the reads (LOADING) that would make the feed say "lost" again and again
                    await self.reader.ping()
                    self._reader_id = await self.reader.client_id()
                    if said := outage.back():
                        log.warning("%s", said)
                self._changed.clear()
                streams = await self._streams()
                if not streams:
                    await self._changed.wait()
                    continue
                if self._changed.is_set():
                    continue
                self._generation += 1
                self._reading = True
                try:
                    reply = await self.reader.xread(cast(Any, streams), count=READ_COUNT, block=BLOCK_MS)
                finally:
                    self._reading = False
                self._queue(_items(reply, self.keys))
            except (RedisConnectionError, RedisTimeoutError) as e:
                if said := outage.lost(e):
                    log.warning("%s", said)
                await asyncio.sleep(outage.pause)
                self._reader_id = None  # a new connection has a new id

    async def _streams(self) -> dict[str, str]:
        """The output stream of every agent with a topic, from where this feed stands."""
        agents = self.registry.keys_of("agent")
        unknown = [agent for agent in agents if agent not in self.cursors]
        if unknown:
            stored = await self.client.hmget(self.keys.topics(OFFSETS), unknown)
            for agent, last in zip(unknown, stored, strict=True):
                self.cursors[agent] = str(last) if last else "0"
                for seed in self.seeders:
                    await seed(agent, self.cursors[agent])
        return {self.keys.output(agent): self.cursors[agent] for agent in agents}

    def _queue(self, items: list[tuple[str, str, dict[str, str]]]) -> None:
        for agent, item_id, fields in items:
            self.cursors[agent] = item_id
            thread = self.registry.thread_of("agent", agent)
            if thread is None:
                continue
            token = (f"{TOKEN_PREFIX}|{agent}|{item_id}",)
            kind = fields.get("kind", "")
            if kind == "prompt":
                self.sender.new_turn(thread, token)
            elif any(repeat(agent, fields) for repeat in self.repeats):
                self.sender.put_output(thread, "", token)  # in the topic already: only its place is kept
            else:
                text = output_item(kind, fields.get("text", ""), fields.get("tool", ""))
                self.sender.put_output(thread, text, token)
            for observe in self.observers:  # after: what they queue goes below the item
                observe(agent, fields)

    async def confirm(self, batch: Batch, _message_id: int | None) -> None:
        """Telegram shows these items now: remember the last one per agent."""
        last: dict[str, str] = {}
        for token in batch.tokens:
            prefix, _, rest = token.partition("|")
            if prefix == TOKEN_PREFIX:
                agent, _, item_id = rest.partition("|")
                last[agent] = item_id
        if last:
            try:
                await self.client.hset(self.keys.topics(OFFSETS), mapping=cast(Any, last))
            except RedisError as e:
                log.warning("output: could not record what was shown: %s", e)


def _items(reply: Any, keys: Keys) -> list[tuple[str, str, dict[str, str]]]:
    """(agent, item id, fields) of an XREAD reply over output streams, oldest first per agent."""
    prefix = keys.output("")
    return [
        (str(stream)[len(prefix) :], str(item_id), fields)
        for stream, entries in (reply or [])
        for item_id, fields in entries
        if fields is not None
    ]
