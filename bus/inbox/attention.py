"""What waits on a person (`attention:<id>`), from the "needs you" event that raised it to its answer,
kept in Redis so that restarts lose nothing; and the delivery marks of its escalation.

Which events open and close an item, and when it is repeated, is `bus.inbox.attention_rules` (pure). Every
change is one Lua script (`bus/lua/attention_*.lua`): an item opens once however many workers read its
event, the first answer closes it, and a delivery is taken only while the item is open.
"""

from __future__ import annotations

import os
from typing import Any, cast

import redis

from bus.events.event_model import Event
from bus.inbox.ages import format_age
from bus.inbox.attention_rules import NEEDS_YOU, closes, how_to_answer, opens, slot, stream_order
from bus.stores.hash_record import HashRecord
from bus.stores.hashes import ordered, read_hashes
from bus.wire.keys import Keys

CLOSED_TTL = 86400  # seconds an answered item is kept: a late copy of its event must not open it again
LEASE_MS = 30_000  # a delivery not marked done this long after it was taken is taken again
_LUA = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lua")  # bus/lua


def _script(name: str) -> str:
    with open(os.path.join(_LUA, f"attention_{name}.lua"), encoding="utf-8") as f:
        return f.read()


class Item(HashRecord):
    """One thing an agent waits on a person for. `event` is the stream id of the event that raised it,
    `raised_at` its time (Redis's clock, seconds); open while `answered_at` is 0."""

    id: str
    agent: str
    kind: str
    event: str
    raised_at: float
    msg: str = ""
    project: str = ""
    task: str = ""
    answered_at: float = 0.0
    answered_by: str = ""

    @property
    def open(self) -> bool:
        return not self.answered_at


def listing(items: list[Item], now: float) -> list[str]:
    """One line per item, as `ib attention` and /attention show them: how long, who, what, and how to
    answer. Pure."""
    lines = []
    for item in items:
        waited = format_age(now - item.raised_at)
        answer = how_to_answer(item.kind, item.agent)
        lines.append(f"{waited:>4}  {item.agent}  {item.kind}: {item.msg or item.kind}  ({answer})")
    return lines


def raised_at(entry_id: str) -> float:
    """The time of a stream entry, from its id (milliseconds of Redis's clock)."""
    return stream_order(entry_id)[0] / 1000


class AttentionStore:
    def __init__(self, client: redis.Redis, keys: Keys) -> None:
        self.client = client
        self.keys = keys
        self._raise = client.register_script(_script("raise"))
        self._answer = client.register_script(_script("answer"))
        self._claim = client.register_script(_script("claim"))

    def raise_for(self, event: Event) -> Item | None:
        """The item `event` opened, or the open one of the same agent and kind it joins; None when
        the event needs nobody."""
        if not opens(event.type, event.agent) or not event.id or event.agent is None:
            return None
        item = Item(
            id=f"n-{event.id}",
            agent=event.agent,
            kind=event.type,
            event=event.id,
            raised_at=raised_at(event.id),
            msg=event.msg[:2000],
            project=event.project or "",
            task=event.task or "",
        )
        flat = [x for kv in item.to_hash().items() for x in kv]
        keys = [self.keys.attention(item.id), self.keys.attention_open, self.keys.attention_slots]
        args: list[str | int] = [item.id, slot(item.agent, item.kind), int(item.raised_at * 1000), *flat]
        new, found = cast(list[Any], self._raise(keys=keys, args=args))
        return item if new else self.get(str(found))

    def on_event(self, event: Event) -> list[str]:
        """Keep the items up to date with one event: it opens one, or closes its agent's earlier ones.
        The ids it closed."""
        if closes(event.type, event.agent, event.data) and event.agent:
            return self.answer(event.agent, f"{event.type} event {event.id}", before=event.id)
        self.raise_for(event)
        return []

    def answer(self, agent: str, by: str, before: str = "") -> list[str]:
        """Close the agent's open items (those raised by an event before the stream id `before`, when
        given): they were answered `by` someone, or the agent moved on. The ids closed; a second answer
        closes nothing."""
        keys = [self.keys.attention_open, self.keys.attention_slots]
        args: list[str | int] = [self.keys.attention(""), agent, before, by or "someone", CLOSED_TTL]
        args += NEEDS_YOU
        return [str(i) for i in cast(list[Any], self._answer(keys=keys, args=args))]

    def open_items(self) -> list[Item]:
        """What waits on a person now, oldest first."""
        ids = ordered(self.client, self.keys.attention_open)
        keys = [self.keys.attention(i) for i in ids]
        return [
            Item.from_hash(d, key=k) for k, d in zip(keys, read_hashes(self.client, keys), strict=True) if d
        ]

    def get(self, item_id: str) -> Item | None:
        data = read_hashes(self.client, [self.keys.attention(item_id)])[0]
        return Item.from_hash(data, key=self.keys.attention(item_id)) if data else None

    def take(self, item_id: str, target: str, lease_ms: int = LEASE_MS) -> bool:
        """Whether the caller must deliver `item_id` to `target` now: the item is open, the target not
        delivered, and no other taker holds it (one that died lets go after `lease_ms`)."""
        keys = [
            self.keys.attention_open,
            self.keys.attention_sent(item_id),
            self.keys.attention_lease(item_id),
        ]
        return bool(self._claim(keys=keys, args=[item_id, target, lease_ms]))

    def delivered(self, item_id: str, target: str) -> None:
        """`target` got the item: never sent again (the item's marks go with it)."""
        sent, lease = self.keys.attention_sent(item_id), self.keys.attention_lease(item_id)
        pipe = self.client.pipeline()
        pipe.hset(sent, target, "1")
        pipe.hdel(lease, target)
        pipe.expire(sent, CLOSED_TTL * 7)
        pipe.execute()

    def delivered_to(self, item_id: str) -> set[str]:
        return set(cast(list[str], self.client.hkeys(self.keys.attention_sent(item_id))))

    def now(self) -> float:
        """Redis's clock (seconds), the one the items' raise times come from."""
        seconds, micros = self.client.time()
        return seconds + micros / 1e6
