"""What waits to be shown in a topic, as the feeds and handlers hand it to the outbound queue
(`bot.delivery.outbound`) and the folding of routine events reads it (`bot.delivery.folding`). Pure."""

from __future__ import annotations

from dataclasses import dataclass

from bot.render.digest_render import Fold
from bot.render.render import Button


@dataclass(frozen=True)
class Document:
    filename: str
    content: bytes
    photo: bool = False  # an image shown as a picture (sendPhoto), not as a file


@dataclass(frozen=True)
class Outgoing:
    """One thing to show in a topic. `tokens` are confirmed once Telegram accepted it.

    `anchor` marks a message people may reply to (a question id); a message with buttons or an anchor
    ends a merged message, so its buttons sit under it and replies find it. Only `mergeable` items
    (event renderings) are merged; replies to people and documents always go alone, and so does an
    `edit`: the new text of message `edit` (a dialog told again, bot.feeds.dialog_messages). `urgent`:
    it waits on a person, and goes before everything else. `fold`: how a routine event reads in its
    topic's digest when the chat folds (bot.delivery.folding).
    """

    chat: int
    thread: int | None
    text: str
    buttons: tuple[tuple[Button, ...], ...] = ()
    tokens: tuple[str, ...] = ()
    anchor: str | None = None
    reply_to: int | None = None
    document: Document | None = None
    urgent: bool = False
    mergeable: bool = True
    edit: int | None = None
    fold: Fold | None = None
