"""Messages agents queue for the person's primary session (`ib send user`): one hash per message and an
index by time, pending until acknowledged. Adding or acknowledging appends a `message` event, so the status
node and the bot hear of it without polling.

Adding waits for the replicas (`wait`, bus.events.replication): the agent was told its message is queued, and
one only the failed primary held would be gone. Acknowledging does not: one the failover lost shows the
message again, and the person acknowledges it once more (at least once, never lost)."""

from __future__ import annotations

import secrets
import time
from collections.abc import Sequence
from typing import Any, ClassVar, cast

import redis

from bus.errors import InvalidInput, NotFound
from bus.events.envelope import EVENT_FIELD, encode, make_event
from bus.events.replication import NO_WAIT, Wait, commit
from bus.settings.defaults import EVENTS_MAXLEN
from bus.stores.hash_record import HashRecord
from bus.stores.hashes import ordered, read_hash, read_hashes, write_hash
from bus.wire.keys import Keys

KINDS = ("question", "status", "alert", "complete")
ID_PREFIX = "m-"


class Message(HashRecord):
    """One message for the person; `ts` is epoch seconds, `sender` the agent that sent it (key `from`)."""

    hash_keys: ClassVar[dict[str, str]] = {"sender": "from"}

    id: str
    sender: str = "unknown"
    kind: str = "status"
    text: str = ""
    ts: float = 0.0
    project: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "from": self.sender, "kind": self.kind, "text": self.text, "ts": self.ts}


def is_message_id(value: str) -> bool:
    return value.startswith(ID_PREFIX)


class MessageStore:
    def __init__(
        self, client: redis.Redis, keys: Keys, maxlen: int = EVENTS_MAXLEN, wait: Wait = NO_WAIT
    ) -> None:
        self.client = client
        self.keys = keys
        self.maxlen = maxlen
        self.wait = wait

    def add(self, sender: str, kind: str, text: str, project: str = "") -> Message:
        """Store the message and append its `message` event in one transaction: no reader sees one alone."""
        if kind not in KINDS:
            raise InvalidInput(f"bad message kind {kind!r}: use one of {', '.join(KINDS)}")
        message = Message(
            id=f"{ID_PREFIX}{secrets.token_hex(6)}",
            sender=sender,
            kind=kind,
            text=text,
            ts=time.time(),
            project=project,
        )
        event = make_event(
            "message",
            f"To the user ({kind}): {text}",
            sender=sender,
            agent=None if sender == "unknown" else sender,
            project=project or None,
            data={"kind": kind, "message_id": message.id},
        )
        pipe = self.client.pipeline()
        write_hash(pipe, self.keys.user_message(message.id), message.to_hash())
        pipe.zadd(self.keys.user_messages, {message.id: message.ts})
        pipe.xadd(self.keys.events, {EVENT_FIELD: encode(event)}, maxlen=self.maxlen, approximate=True)
        commit(self.client, pipe, self.wait, f"message {message.id}")
        return message

    def pending(self) -> list[Message]:
        """Every message not acknowledged yet, oldest first."""
        keys = [self.keys.user_message(i) for i in ordered(self.client, self.keys.user_messages)]
        found = zip(keys, read_hashes(self.client, keys), strict=True)
        return [Message.from_hash(d, key=k) for k, d in found if d]

    def get(self, message_id: str) -> Message:
        key = self.keys.user_message(message_id)
        data = read_hash(self.client, key)
        if not data:
            raise NotFound(f"no pending message {message_id!r} (see `ib messages`)")
        return Message.from_hash(data, key=key)

    def acknowledge(self, message_id: str, by: str = "user") -> Message:
        """Remove one message; an id nobody queued (or already acknowledged) is `NotFound`."""
        message = self.get(message_id)
        if not self.remove([message_id], by):
            raise NotFound(f"message {message_id!r} was acknowledged meanwhile")
        return message

    def acknowledge_all(self, by: str = "user") -> list[str]:
        """Remove every pending message; messages queued meanwhile stay. Returns the removed ids."""
        return self.remove(ordered(self.client, self.keys.user_messages), by)

    def remove(self, ids: Sequence[str], by: str = "user") -> list[str]:
        """Remove the messages of `ids` that are pending; one `message` event (data.acknowledged) names
        those this call removed, so two people acknowledging at once each report only their own."""
        if not ids:
            return []
        pipe = self.client.pipeline()
        for message_id in ids:
            pipe.zrem(self.keys.user_messages, message_id)
        pipe.delete(*[self.keys.user_message(i) for i in ids])
        replies = cast(list[int], pipe.execute())
        removed = [i for i, gone in zip(ids, replies[: len(ids)], strict=True) if gone]
        if removed:
            event = make_event(
                "message",
                f"Acknowledged {len(removed)} message(s) for the user: {', '.join(removed)}",
                sender=by,
                data={"acknowledged": removed},
            )
            self.client.xadd(
                self.keys.events, {EVENT_FIELD: encode(event)}, maxlen=self.maxlen, approximate=True
            )
        return removed
