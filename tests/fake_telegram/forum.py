"""The fake's world: one forum supergroup with its topics, messages, documents and pending updates.

Everything is guarded by one condition variable (`Forum.cond`); Bot API methods and the test API both
take it. Records handed to tests are copies.
"""

from __future__ import annotations

import copy
import itertools
import re
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

BOT_ID = 7000001
CHAT_ID = -1001234567890
GENERAL = None
ICON_COLORS = (0x6FB9F0, 0xFFD67E, 0xCB86DB, 0x8EEE98, 0xFF93B2, 0xFB6F5F)
# A word that is a bot command, as Telegram marks one: `/name` or `/name@botname`, then no word goes on.
BOT_COMMAND = re.compile(r"(?<![\w/<>])/[A-Za-z0-9_]{1,64}(?:@[A-Za-z0-9_]{3,32})?(?![\w/])")


@dataclass
class FakeTopic:
    thread_id: int
    name: str
    icon_color: int = ICON_COLORS[0]
    icon_custom_emoji_id: str | None = None
    closed: bool = False
    deleted: bool = False


@dataclass
class FakeDocument:
    file_id: str
    file_unique_id: str
    file_name: str
    mime_type: str
    content: bytes
    file_path: str


def png_size(content: bytes) -> tuple[int, int]:
    """(width, height) of a PNG from its IHDR chunk; (0, 0) when it is not a PNG."""
    if content[:8] != b"\x89PNG\r\n\x1a\n" or content[12:16] != b"IHDR":
        return (0, 0)
    return int.from_bytes(content[16:20], "big"), int.from_bytes(content[20:24], "big")


@dataclass
class FakeMessage:
    """A message as the forum holds it. `text` is what a person sees (markup parsed, trimmed);
    `source` is the text as the bot sent it; `edits` holds the earlier visible texts, oldest first."""

    message_id: int
    thread_id: int | None
    sender_id: int
    text: str
    source: str = ""
    parse_mode: str | None = None
    reply_markup: dict[str, Any] | None = None
    reply_to: int | None = None
    edits: list[str] = field(default_factory=list)
    reactions: list[str] = field(default_factory=list)
    document: FakeDocument | None = None
    photo: FakeDocument | None = None  # sendPhoto: the image as uploaded (Telegram would re-encode it)
    topic_created: FakeTopic | None = None
    deleted: bool = False
    date: int = field(default_factory=lambda: int(time.time()))
    edit_date: int | None = None

    @property
    def buttons(self) -> list[list[tuple[str, str]]]:
        """The inline keyboard as rows of (label, callback data); url buttons show the url."""
        rows = (self.reply_markup or {}).get("inline_keyboard") or []
        return [[(b["text"], b.get("callback_data") or b.get("url", "")) for b in row] for row in rows]


def command_entities(text: str) -> list[dict[str, Any]]:
    """The `bot_command` entities Telegram puts on a message's commands (offsets in UTF-16 code units)."""

    def units(part: str) -> int:
        return len(part.encode("utf-16-le")) // 2

    return [
        {"type": "bot_command", "offset": units(text[: m.start()]), "length": units(m.group())}
        for m in BOT_COMMAND.finditer(text)
    ]


@dataclass
class CallbackAnswer:
    query_id: str
    text: str | None
    show_alert: bool


@dataclass
class Update:
    update_id: int
    body: dict[str, Any]


class Forum:
    """State of the fake Telegram as seen by one bot in one forum supergroup."""

    def __init__(self, title: str = "ittybus test forum") -> None:
        self.cond = threading.Condition()
        self.chat_id = CHAT_ID
        self.title = title
        self.topics: dict[int, FakeTopic] = {}
        self.messages: dict[int, FakeMessage] = {}
        self.documents: dict[str, FakeDocument] = {}
        self.updates: list[Update] = []
        self.queries: dict[str, tuple[int, int]] = {}  # pending callback query id → (user, message)
        self.answers: list[CallbackAnswer] = []
        self.commands: dict[str, list[dict[str, str]]] = {}
        self.chat_actions: list[tuple[int | None, str]] = []
        self.started: set[int] = set()  # users who opened a private chat with the bot (Start)
        # (user, message, time.monotonic() it came) of what the bot sent in private chats
        self.direct: list[tuple[int, FakeMessage, float]] = []
        self.calls: Counter[str] = Counter()
        self.sent = 0
        self.edited = 0
        self.rejected_429 = 0
        self.poll_generation = 0
        self.closed = False
        self._message_ids = itertools.count(2)
        self._update_ids = itertools.count(100001)
        self._file_ids = itertools.count(1)
        self._query_ids = itertools.count(1)

    # --- JSON shapes of the Bot API ---------------------------------------------------------------

    def chat_json(self) -> dict[str, Any]:
        return {"id": self.chat_id, "type": "supergroup", "title": self.title, "is_forum": True}

    @staticmethod
    def user_json(user_id: int) -> dict[str, Any]:
        if user_id == BOT_ID:
            return {"id": BOT_ID, "is_bot": True, "first_name": "ittybus", "username": "ittybus_test_bot"}
        return {"id": user_id, "is_bot": False, "first_name": f"User {user_id}"}

    @staticmethod
    def me_json() -> dict[str, Any]:
        me = Forum.user_json(BOT_ID)
        me.update(can_join_groups=True, can_read_all_group_messages=False, supports_inline_queries=False)
        return me

    @staticmethod
    def topic_json(topic: FakeTopic) -> dict[str, Any]:
        out: dict[str, Any] = {
            "message_thread_id": topic.thread_id,
            "name": topic.name,
            "icon_color": topic.icon_color,
        }
        if topic.icon_custom_emoji_id:
            out["icon_custom_emoji_id"] = topic.icon_custom_emoji_id
        return out

    @staticmethod
    def document_json(doc: FakeDocument) -> dict[str, Any]:
        return {
            "file_id": doc.file_id,
            "file_unique_id": doc.file_unique_id,
            "file_name": doc.file_name,
            "mime_type": doc.mime_type,
            "file_size": len(doc.content),
        }

    @staticmethod
    def photo_json(photo: FakeDocument) -> dict[str, Any]:
        width, height = png_size(photo.content)
        return {
            "file_id": photo.file_id,
            "file_unique_id": photo.file_unique_id,
            "width": width,
            "height": height,
            "file_size": len(photo.content),
        }

    def message_json(self, m: FakeMessage, *, nested: bool = False) -> dict[str, Any]:
        out: dict[str, Any] = {
            "message_id": m.message_id,
            "date": m.date,
            "chat": self.chat_json(),
            "from": self.user_json(m.sender_id),
        }
        if m.thread_id is not None:
            out["message_thread_id"] = m.thread_id
            out["is_topic_message"] = True
        if m.topic_created is not None:
            out["forum_topic_created"] = {
                "name": m.topic_created.name,
                "icon_color": m.topic_created.icon_color,
            }
        elif m.photo is not None:
            out["photo"] = [self.photo_json(m.photo)]
            if m.text:
                out["caption"] = m.text
        elif m.document is not None:
            out["document"] = self.document_json(m.document)
            if m.text:
                out["caption"] = m.text
        else:
            out["text"] = m.text
            if commands := command_entities(m.text):
                out["entities"] = commands
        if m.reply_markup is not None:
            out["reply_markup"] = m.reply_markup
        if m.edit_date is not None:
            out["edit_date"] = m.edit_date
        # In a topic, a message that replies to nothing replies to the topic's first (service) message.
        target = m.reply_to if m.reply_to is not None else m.thread_id
        replied = self.messages.get(target) if target is not None and target != m.message_id else None
        if not nested and replied is not None and not replied.deleted:
            out["reply_to_message"] = self.message_json(replied, nested=True)
        return out

    # --- changes shared by the Bot API and the test API ---------------------------------------------

    def next_message_id(self) -> int:
        return next(self._message_ids)

    def next_file_number(self) -> int:
        return next(self._file_ids)

    def add_message(self, message: FakeMessage) -> FakeMessage:
        self.messages[message.message_id] = message
        return message

    def open_topic(self, name: str, icon_color: int = ICON_COLORS[0], emoji: str | None = None) -> FakeTopic:
        """A new topic; as in Telegram its id is the id of the service message that opens it."""
        thread_id = self.next_message_id()
        topic = FakeTopic(thread_id, name, icon_color, emoji)
        self.topics[thread_id] = topic
        self.add_message(FakeMessage(thread_id, thread_id, BOT_ID, "", topic_created=topic))
        return topic

    def live_topic(self, thread_id: int | None) -> FakeTopic | None:
        topic = self.topics.get(thread_id) if thread_id is not None else None
        return topic if topic is not None and not topic.deleted else None

    def queue_update(self, body: dict[str, Any]) -> int:
        update = Update(next(self._update_ids), body)
        self.updates.append(update)
        self.cond.notify_all()
        return update.update_id

    def confirm_updates(self, offset: int) -> None:
        """getUpdates' offset: a positive one confirms every earlier update, a negative one keeps the last."""
        if offset > 0:
            self.updates = [u for u in self.updates if u.update_id >= offset]
        elif offset < 0:
            self.updates = self.updates[offset:]

    # --- the test API -------------------------------------------------------------------------------

    def start_private_chat(self, user_id: int) -> None:
        """The person presses Start in a private chat with the bot: from now on it may message them."""
        self.started.add(user_id)

    def inject_message(
        self, user_id: int, text: str, thread_id: int | None = None, reply_to: int | None = None
    ) -> int:
        if thread_id is not None and self.live_topic(thread_id) is None:
            raise ValueError(f"no topic {thread_id} in the fake forum")
        if reply_to is not None and reply_to not in self.messages:
            raise ValueError(f"no message {reply_to} to reply to")
        m = self.add_message(
            FakeMessage(self.next_message_id(), thread_id, user_id, text, text, reply_to=reply_to)
        )
        self.queue_update({"message": self.message_json(m)})
        return m.message_id

    def inject_callback(self, user_id: int, message_id: int, data: str) -> str:
        m = self.messages.get(message_id)
        if m is None or m.deleted:
            raise ValueError(f"no message {message_id} to press a button on")
        query_id = f"cbq-{next(self._query_ids)}"
        self.queries[query_id] = (user_id, message_id)
        self.queue_update(
            {
                "callback_query": {
                    "id": query_id,
                    "from": self.user_json(user_id),
                    "message": self.message_json(m),
                    "chat_instance": str(-self.chat_id),
                    "data": data,
                }
            }
        )
        return query_id

    def shown(self, thread_id: int | None) -> list[FakeMessage]:
        """Copies of the messages a person sees in a topic (None: General), oldest first."""
        return [
            copy.deepcopy(m)
            for m in sorted(self.messages.values(), key=lambda m: m.message_id)
            if m.thread_id == thread_id and not m.deleted and m.topic_created is None
        ]
