"""The topic registry: which forum topic is which project, task, agent or merge, kept in Redis.

One hash per kind (`topic:project`, `topic:task`, `topic:agent`, `topic:merge`: id → thread) and
`topic:name` (thread → name and project, to re-create a deleted topic). The bot is the only writer, so
it reads them once at start and keeps a copy; every change is written through at once.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, cast

import redis.asyncio as aredis

from bot.topics.routing import Bindings
from bus.wire.keys import Keys

log = logging.getLogger(__name__)

KINDS = ("project", "task", "agent", "merge")
NAMES = "name"


@dataclass(frozen=True)
class TopicInfo:
    """What the bot remembers of a topic it may have to re-create."""

    name: str
    project: str = ""


def _strings(raw: Any) -> dict[str, str]:
    """A hash as read by a client that decodes responses."""
    return cast(dict[str, str], raw)


class TopicRegistry:
    def __init__(self, client: aredis.Redis, keys: Keys) -> None:
        self.client = client
        self.keys = keys
        self._bound: dict[str, dict[str, int]] = {kind: {} for kind in KINDS}
        self._listeners: list[Callable[[], None]] = []
        self._opening: set[tuple[str, str]] = set()  # bound, the message that opens the topic not queued yet

    def on_change(self, listener: Callable[[], None]) -> None:
        """Call `listener` after every change (the output feed then reads the new agents' streams)."""
        self._listeners.append(listener)

    def _changed(self) -> None:
        for listener in self._listeners:
            listener()

    async def load(self) -> None:
        for kind in KINDS:
            raw = _strings(await self.client.hgetall(self.keys.topics(kind)))
            self._bound[kind] = {
                key: int(thread) for key, thread in raw.items() if thread.lstrip("-").isdigit()
            }
        log.info("topics loaded: %s", {kind: len(bound) for kind, bound in self._bound.items()})

    # --- reading ---------------------------------------------------------------------------------------

    def bindings(self) -> Bindings:
        return Bindings(
            projects=dict(self._bound["project"]),
            tasks=dict(self._bound["task"]),
            agents=dict(self._bound["agent"]),
            merges=dict(self._bound["merge"]),
        )

    def thread_of(self, kind: str, key: str) -> int | None:
        return self._bound[kind].get(key)

    def bound_to(self, thread: int) -> list[tuple[str, str]]:
        """(kind, id) of everything bound to `thread`, projects first, then tasks, agents, merges."""
        return [(kind, key) for kind in KINDS for key, t in sorted(self._bound[kind].items()) if t == thread]

    def keys_of(self, kind: str) -> list[str]:
        """The bound ids of `kind`, but those whose topic's opening message is still to be queued: what
        follows it in the topic (an agent's output) waits for it."""
        return sorted(key for key in self._bound[kind] if (kind, key) not in self._opening)

    async def info(self, thread: int) -> TopicInfo | None:
        raw = await self.client.hget(self.keys.topics(NAMES), str(thread))
        if not isinstance(raw, str):
            return None
        try:
            body = json.loads(raw)
        except ValueError:
            return None
        return TopicInfo(str(body.get("name") or ""), str(body.get("project") or ""))

    # --- changing --------------------------------------------------------------------------------------

    async def bind(
        self, kind: str, key: str, thread: int, info: TopicInfo | None = None, opening: bool = False
    ) -> None:
        """Bind `key` of `kind` to `thread`; a project topic serves one project at a time. `opening`: the
        event that bound it is still to be queued in the topic; `keys_of` leaves `key` out until `opened`."""
        pipe = self.client.pipeline(transaction=True)
        if kind == "project":
            for other, t in list(self._bound["project"].items()):
                if t == thread and other != key:
                    pipe.hdel(self.keys.topics("project"), other)
                    del self._bound["project"][other]
        pipe.hset(self.keys.topics(kind), key, str(thread))
        if info is not None:
            body = json.dumps({"name": info.name, "project": info.project}, ensure_ascii=False)
            pipe.hset(self.keys.topics(NAMES), str(thread), body)
        await pipe.execute()
        self._bound[kind][key] = thread
        if opening:
            self._opening.add((kind, key))
        log.info("topic %s bound to %s %s", thread, kind, key)
        self._changed()

    def opened(self) -> None:
        """The events that bound topics with `opening` are queued in them: what follows may go."""
        if self._opening:
            self._opening.clear()
            self._changed()

    async def unbind(self, thread: int) -> list[tuple[str, str]]:
        """Detach everything bound to `thread`; returns what was bound."""
        gone = self.bound_to(thread)
        if not gone:
            return []
        pipe = self.client.pipeline(transaction=True)
        for kind, key in gone:
            pipe.hdel(self.keys.topics(kind), key)
            del self._bound[kind][key]
        pipe.hdel(self.keys.topics(NAMES), str(thread))
        await pipe.execute()
        log.info("topic %s unbound from %s", thread, gone)
        self._changed()
        return gone

    async def move(self, old: int, new: int) -> None:
        """Everything bound to topic `old` is bound to `new` now (a topic re-created, or given up)."""
        moved = self.bound_to(old)
        info = await self.info(old)
        pipe = self.client.pipeline(transaction=True)
        for kind, key in moved:
            pipe.hset(self.keys.topics(kind), key, str(new))
            self._bound[kind][key] = new
        pipe.hdel(self.keys.topics(NAMES), str(old))
        if info is not None and not await self.client.hexists(self.keys.topics(NAMES), str(new)):
            body = json.dumps({"name": info.name, "project": info.project}, ensure_ascii=False)
            pipe.hset(self.keys.topics(NAMES), str(new), body)
        await pipe.execute()
        log.info("topic %s moved to %s: %s", old, new, moved)
        self._changed()
