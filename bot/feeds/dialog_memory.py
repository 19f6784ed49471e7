"""The dialogs' messages kept in Redis: which message shows a dialog in a topic, and the event that first
told it. A restarted bot (or another bot process) reads them back, so a dialog told before the restart is
edited in its message when told again, never shown a second time (bot.feeds.dialog_messages holds the rest).

Each entry expires after TTL seconds, as the marks of what was shown do: an event older than that is
not read again. An entry missing or unreadable is no error: the dialog is then told as a new message.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Mapping

import redis.asyncio as aredis
from pydantic import ValidationError

from bot.feeds.dialog_messages import Dialog
from bus.events.event_model import Event
from bus.wire.keys import Keys

log = logging.getLogger(__name__)

TTL = 7 * 24 * 3600


class DialogMemory:
    def __init__(self, client: aredis.Redis, keys: Keys) -> None:
        self.client = client
        self.keys = keys

    async def keep(self, placed: Iterable[tuple[Dialog, Event]], message_id: int) -> None:
        """Each dialog of `placed` is shown by `message_id`, told first by its event."""
        pipe = self.client.pipeline(transaction=False)
        for (thread, prompt), first in placed:
            key = self.keys.dialog_message(thread, prompt)
            pipe.hset(key, mapping={"message": str(message_id), "event": json.dumps(first.envelope())})
            pipe.expire(key, TTL)
        await pipe.execute()

    async def recall(self, dialogs: Iterable[Dialog]) -> dict[Dialog, tuple[int, Event]]:
        """The message and first event of each of `dialogs` that an entry remembers."""
        asked = list(dict.fromkeys(dialogs))
        if not asked:
            return {}
        pipe = self.client.pipeline(transaction=False)
        for thread, prompt in asked:
            pipe.hgetall(self.keys.dialog_message(thread, prompt))
        found = await pipe.execute(raise_on_error=False)
        recalled: dict[Dialog, tuple[int, Event]] = {}
        for dialog, fields in zip(asked, found, strict=True):
            entry = remembered(fields) if isinstance(fields, Mapping) else None
            if entry is not None:
                recalled[dialog] = entry
            elif fields:
                log.warning("dialog %s in topic %s: its entry does not read; told anew", dialog[1], dialog[0])
        return recalled


def remembered(fields: Mapping[str, str]) -> tuple[int, Event] | None:
    """An entry's message id and first event; None when it has none or they do not read."""
    try:
        message_id = int(fields["message"])
        envelope = json.loads(fields["event"])
        event = Event.from_envelope(envelope) if isinstance(envelope, dict) else None
    except (KeyError, ValueError, TypeError, ValidationError):
        return None
    return (message_id, event) if event is not None else None
