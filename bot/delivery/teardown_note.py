"""One message per Kill, Merge or Approve: the answer to the tap (or /kill), edited as the teardown goes.

While an agent is torn down its own events in that topic (`state`, `stopped`, `killed`, `merged`) fold
into the answer instead of each being a message of its own. The note is sent and edited at once, outside the
outbox (a person is looking at it), waiting out Telegram's flood limit when it must. When Telegram
refuses an edit for good, the folded event goes the usual way, and so does the note's last word.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass, field

from telegram.error import BadRequest, TelegramError

from bot.delivery.outbound import Batch
from bot.delivery.sender import MAX_NOW_TRIES, Sender
from bus.events.event_model import Event

log = logging.getLogger(__name__)

FOLDED = frozenset({"state", "stopped", "killed", "merged"})
KEEP_SECONDS = 30.0  # after the kill answered: its last events may still be on their way


@dataclass
class Note:
    thread: int | None
    message_id: int
    head: str
    reply_to: int | None = None
    lines: list[str] = field(default_factory=list)
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)

    @property
    def text(self) -> str:
        return "\n".join([self.head, *self.lines])


class TeardownNotes:
    """The open notes, one per agent being torn down."""

    def __init__(
        self, sender: Sender, say: Callable[[int | None, str, int | None], None], keep: float = KEEP_SECONDS
    ) -> None:
        self.sender = sender
        self.say = say  # the outbox's way: (thread, html, reply_to)
        self.keep = keep
        self.notes: dict[str, Note] = {}

    async def open(self, agent: str, thread: int | None, reply_to: int | None, head: str) -> int:
        """Send the note; its message id."""
        message_id = await self.sender.show_now(Batch(self.chat_id, thread, head, reply_to=reply_to))
        self.notes[agent] = Note(thread, message_id, head, reply_to)
        return message_id

    def reopen(self, agent: str, thread: int | None, message: int, reply_to: int | None, head: str) -> None:
        """A note sent before the bot restarted (an approval still followed): edited from here on."""
        self.notes[agent] = Note(thread, message, head, reply_to)

    async def retitle(self, agent: str, head: str) -> None:
        """A step of a long wait (an approved merge in the queue): the note's first lines say it."""
        note = self.notes.get(agent)
        if note is not None:
            note.head = head
            await self._edit(note)

    async def close(self, agent: str, head: str) -> None:
        """The teardown answered: the note says so, and takes the agent's late events a little longer."""
        note = self.notes.get(agent)
        if note is None:
            return
        note.head = head
        if not await self._edit(note):  # the teardown's outcome is never lost: a message of its own
            self.say(note.thread, head, note.reply_to)
        asyncio.get_running_loop().call_later(self.keep, self._forget, agent, note)

    async def fold(self, event: Event, thread: int | None, line: str) -> bool:
        """Show `line` (the event rendered) in the agent's note; False when the event is not one to fold
        or the note cannot be edited (then it is shown as usual)."""
        note = self.notes.get(event.agent or "")
        if note is None or event.type not in FOLDED or thread != note.thread:
            return False
        note.lines.append(line)
        if await self._edit(note, tries=1):  # the consumer does not wait out a flood limit: the outbox does
            return True
        note.lines.remove(line)
        return False

    async def _edit(self, note: Note, tries: int = MAX_NOW_TRIES) -> bool:
        async with note.lock:  # edits in order: the last one shows everything so far
            try:
                await self.sender.show_now(
                    Batch(self.chat_id, note.thread, note.text, edit=note.message_id), tries
                )
            except BadRequest as e:
                if "not modified" in str(e).lower():
                    return True
                log.info("teardown note %s not edited: %s", note.message_id, e)
                return False
            except TelegramError as e:
                log.info("teardown note %s not edited: %s", note.message_id, e)
                return False
        return True

    @property
    def chat_id(self) -> int:
        return self.sender.forum.chat_id

    def _forget(self, agent: str, note: Note) -> None:
        if self.notes.get(agent) is note:
            del self.notes[agent]
