"""The Bot API methods the fake answers, with Telegram's checks and Telegram's error texts.

Each method takes the request's parameters and returns the `result` of a successful answer, or raises
ApiError. They run holding `Forum.cond` (getUpdates waits on it).
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

from tests.fake_telegram.errors import ApiError, bad_request
from tests.fake_telegram.forum import (
    BOT_ID,
    ICON_COLORS,
    CallbackAnswer,
    FakeDocument,
    FakeMessage,
    FakeTopic,
    Forum,
    png_size,
)
from tests.fake_telegram.markup import check_reply_markup, visible_text

MESSAGE_LIMIT = 4096
CAPTION_LIMIT = 1024
PHOTO_LIMIT = 10 * 1024 * 1024
TOPIC_NAME_LIMIT = 128
LONG_POLL_CAP = 50.0
NOT_MODIFIED = (
    "message is not modified: specified new message content and reply markup are exactly the same "
    "as a current content and reply markup of the message"
)
CONFLICT = "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running"
_COMMAND = re.compile(r"[a-z0-9_]{1,32}")


def utf16_length(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


@dataclass(frozen=True)
class Upload:
    """A file part of a multipart request."""

    filename: str
    content_type: str
    content: bytes


class Params:
    """A request's parameters: form fields hold JSON for anything but strings, a JSON body holds values."""

    def __init__(self, values: Mapping[str, Any], files: Mapping[str, Upload] | None = None) -> None:
        self.values = dict(values)
        self.files = dict(files or {})

    def text(self, name: str) -> str | None:
        value = self.values.get(name)
        return None if value is None else str(value)

    def required(self, name: str) -> str:
        value = self.text(name)
        if value is None or value == "":
            raise bad_request(f"{name} is empty")
        return value

    def integer(self, name: str) -> int | None:
        value = self.values.get(name)
        if value is None or value == "":
            return None
        try:
            return int(value)
        except (TypeError, ValueError):
            raise bad_request(f"invalid {name} specified") from None

    def required_integer(self, name: str) -> int:
        value = self.integer(name)
        if value is None:
            raise bad_request(f"{name} is empty")
        return value

    def json(self, name: str) -> Any:
        value = self.values.get(name)
        if not isinstance(value, str):
            return value
        try:
            return json.loads(value)
        except ValueError:
            raise bad_request(f"can't parse {name} JSON object") from None

    def flag(self, name: str) -> bool:
        value = self.json(name)
        return value is True or value == "true"


class BotApi:
    """The methods, by lower-case name (Telegram's method names are case-insensitive)."""

    def __init__(self, forum: Forum) -> None:
        self.forum = forum
        self.methods: dict[str, Callable[[Params], Any]] = {
            name.lower(): getattr(self, name)
            for name in [
                "getMe",
                "getChat",
                "getUpdates",
                "deleteWebhook",
                "getWebhookInfo",
                "setMyCommands",
                "getMyCommands",
                "deleteMyCommands",
                "sendMessage",
                "editMessageText",
                "editMessageReplyMarkup",
                "deleteMessage",
                "sendDocument",
                "sendPhoto",
                "getFile",
                "sendChatAction",
                "setMessageReaction",
                "answerCallbackQuery",
                "createForumTopic",
                "editForumTopic",
                "closeForumTopic",
                "reopenForumTopic",
                "deleteForumTopic",
            ]
        }

    # --- checks shared by several methods ---------------------------------------------------------------

    def _chat(self, p: Params) -> None:
        if p.required("chat_id") != str(self.forum.chat_id):
            raise bad_request("chat not found")

    def _thread(self, p: Params) -> int | None:
        thread_id = p.integer("message_thread_id")
        if thread_id is None:
            return None
        topic = self.forum.live_topic(thread_id)
        if topic is None:
            raise bad_request("message thread not found")
        if topic.closed:
            raise bad_request("TOPIC_CLOSED")
        return thread_id

    def _topic(self, p: Params) -> FakeTopic:
        self._chat(p)
        topic = self.forum.live_topic(p.required_integer("message_thread_id"))
        if topic is None:
            raise bad_request("TOPIC_ID_INVALID")
        return topic

    def _reply_to(self, p: Params) -> int | None:
        params = p.json("reply_parameters")
        params = params if isinstance(params, dict) else {}
        target = params.get("message_id")
        target = target if target is not None else p.integer("reply_to_message_id")
        if target is None:
            return None
        m = self.forum.messages.get(target) if isinstance(target, int) else None
        if m is None or m.deleted:
            if params.get("allow_sending_without_reply") or p.flag("allow_sending_without_reply"):
                return None
            raise bad_request("message to be replied not found")
        return m.message_id

    def _own(self, p: Params, missing: str) -> FakeMessage:
        self._chat(p)
        m = self.forum.messages.get(p.required_integer("message_id"))
        if m is None or m.deleted or m.topic_created is not None:
            raise bad_request(missing)
        if m.sender_id != BOT_ID:
            raise bad_request("message can't be edited")
        return m

    @staticmethod
    def _shown(text: str, parse_mode: str | None, limit: int, too_long: str) -> str:
        shown = visible_text(text, parse_mode).strip()
        if utf16_length(shown) > limit:
            raise bad_request(too_long)
        return shown

    @staticmethod
    def _topic_name(name: str | None) -> str:
        if name is None or not 1 <= utf16_length(name) <= TOPIC_NAME_LIMIT:
            raise bad_request("TOPIC_NAME_INVALID")
        return name

    # --- bot, updates, commands ---------------------------------------------------------------------------

    def getMe(self, p: Params) -> Any:  # noqa: N802 - the Bot API's method names
        return self.forum.me_json()

    def getChat(self, p: Params) -> Any:  # noqa: N802
        self._chat(p)
        gifts = dict.fromkeys(
            (
                "unlimited_gifts",
                "limited_gifts",
                "unique_gifts",
                "premium_subscription",
                "gifts_from_channels",
            ),
            False,
        )
        return {
            **self.forum.chat_json(),
            "accent_color_id": 0,
            "max_reaction_count": 11,
            "accepted_gift_types": gifts,
        }

    def getUpdates(self, p: Params) -> Any:  # noqa: N802
        forum = self.forum
        offset, limit = p.integer("offset") or 0, p.integer("limit") or 100
        deadline = time.monotonic() + min(float(p.integer("timeout") or 0), LONG_POLL_CAP)
        forum.confirm_updates(offset)
        forum.poll_generation += 1
        forum.cond.notify_all()  # an earlier poll still waiting ends with a conflict
        generation = forum.poll_generation
        while True:
            if forum.closed:
                return []
            if generation != forum.poll_generation:
                raise ApiError(409, CONFLICT)
            ready = [u for u in forum.updates if offset <= 0 or u.update_id >= offset]
            remaining = deadline - time.monotonic()
            if ready or remaining <= 0:
                return [{"update_id": u.update_id, **u.body} for u in ready[: max(1, min(limit, 100))]]
            forum.cond.wait(remaining)

    def deleteWebhook(self, p: Params) -> Any:  # noqa: N802
        if p.flag("drop_pending_updates"):
            self.forum.updates.clear()
        return True

    def getWebhookInfo(self, p: Params) -> Any:  # noqa: N802
        return {"url": "", "has_custom_certificate": False, "pending_update_count": len(self.forum.updates)}

    @staticmethod
    def _scope_key(p: Params) -> str:
        scope = p.json("scope") or {"type": "default"}
        return json.dumps(scope, sort_keys=True) + "|" + (p.text("language_code") or "")

    def setMyCommands(self, p: Params) -> Any:  # noqa: N802
        commands = p.json("commands")
        if not isinstance(commands, list):
            raise bad_request("can't parse commands JSON object")
        for c in commands:
            if not isinstance(c, dict) or not _COMMAND.fullmatch(str(c.get("command", ""))):
                raise bad_request("BOT_COMMAND_INVALID")
            if not 1 <= len(str(c.get("description", ""))) <= 256:
                raise bad_request("BOT_COMMAND_DESCRIPTION_INVALID")
        self.forum.commands[self._scope_key(p)] = commands
        return True

    def getMyCommands(self, p: Params) -> Any:  # noqa: N802
        return self.forum.commands.get(self._scope_key(p), [])

    def deleteMyCommands(self, p: Params) -> Any:  # noqa: N802
        self.forum.commands.pop(self._scope_key(p), None)
        return True

    # --- messages -----------------------------------------------------------------------------------------

    def sendMessage(self, p: Params) -> Any:  # noqa: N802
        if p.required("chat_id") != str(self.forum.chat_id):
            return self._direct(p)
        self._chat(p)
        text = p.text("text") or ""
        if not text.strip():
            raise bad_request("message text is empty")
        thread_id = self._thread(p)
        parse_mode = p.text("parse_mode")
        shown = self._shown(text, parse_mode, MESSAGE_LIMIT, "message is too long")
        if not shown:
            raise bad_request("message text is empty")
        markup = check_reply_markup(p.json("reply_markup"))
        reply_to = self._reply_to(p)
        m = FakeMessage(
            self.forum.next_message_id(), thread_id, BOT_ID, shown, text, parse_mode, markup, reply_to
        )
        return self.forum.message_json(self.forum.add_message(m))

    def _direct(self, p: Params) -> Any:
        """A message to a person in the private chat with the bot, as Telegram allows only to people who
        pressed Start there (403 otherwise); no topics, no replies."""
        user = p.required_integer("chat_id")
        if user < 0:
            raise bad_request("chat not found")
        if user not in self.forum.started:
            raise ApiError(403, "Forbidden: bot can't initiate conversation with a user")
        text = p.text("text") or ""
        shown = self._shown(text, p.text("parse_mode"), MESSAGE_LIMIT, "message is too long")
        if not shown:
            raise bad_request("message text is empty")
        markup = check_reply_markup(p.json("reply_markup"))
        m = FakeMessage(self.forum.next_message_id(), None, BOT_ID, shown, text, p.text("parse_mode"), markup)
        self.forum.direct.append((user, m, time.monotonic()))
        return {
            "message_id": m.message_id,
            "date": m.date,
            "chat": {"id": user, "type": "private", "first_name": f"User {user}"},
            "from": self.forum.user_json(BOT_ID),
            "text": m.text,
        }

    def editMessageText(self, p: Params) -> Any:  # noqa: N802
        m = self._own(p, "message to edit not found")
        if m.document is not None:
            raise bad_request("there is no text in the message to edit")
        text = p.text("text") or ""
        parse_mode = p.text("parse_mode")
        shown = self._shown(text, parse_mode, MESSAGE_LIMIT, "MESSAGE_TOO_LONG")
        if not shown:
            raise bad_request("message text is empty")
        # Telegram drops the inline keyboard of an edit that does not repeat it.
        markup = check_reply_markup(p.json("reply_markup"))
        if (shown, text.strip(), markup) == (m.text, m.source.strip(), m.reply_markup):
            raise bad_request(NOT_MODIFIED)
        m.edits.append(m.text)
        m.text, m.source, m.parse_mode, m.reply_markup = shown, text, parse_mode, markup
        m.edit_date = int(time.time())
        return self.forum.message_json(m)

    def editMessageReplyMarkup(self, p: Params) -> Any:  # noqa: N802
        m = self._own(p, "message to edit not found")
        markup = check_reply_markup(p.json("reply_markup"))
        if markup == m.reply_markup:
            raise bad_request(NOT_MODIFIED)
        m.reply_markup = markup
        m.edit_date = int(time.time())
        return self.forum.message_json(m)

    def deleteMessage(self, p: Params) -> Any:  # noqa: N802
        self._chat(p)
        m = self.forum.messages.get(p.required_integer("message_id"))
        if m is None or m.deleted:
            raise bad_request("message to delete not found")
        if m.topic_created is not None:
            raise bad_request("message can't be deleted")
        m.deleted = True
        return True

    def sendDocument(self, p: Params) -> Any:  # noqa: N802
        self._chat(p)
        thread_id = self._thread(p)
        doc = self._document(p)
        caption = p.text("caption") or ""
        parse_mode = p.text("parse_mode")
        shown = self._shown(caption, parse_mode, CAPTION_LIMIT, "message caption is too long")
        markup = check_reply_markup(p.json("reply_markup"))
        m = FakeMessage(self.forum.next_message_id(), thread_id, BOT_ID, shown, caption, parse_mode, markup)
        m.reply_to, m.document = self._reply_to(p), doc
        return self.forum.message_json(self.forum.add_message(m))

    def sendPhoto(self, p: Params) -> Any:  # noqa: N802
        """Telegram's checks on a photo: at most 10 MB, width + height at most 10000, sides at most 20:1;
        the fake takes PNG only (what the bot sends) and keeps the bytes as uploaded."""
        self._chat(p)
        thread_id = self._thread(p)
        upload = p.files.get("photo")
        value = p.text("photo")
        if value and value.startswith("attach://"):
            upload = p.files.get(value.removeprefix("attach://"))
        if upload is None:
            raise bad_request("there is no photo in the request")
        if len(upload.content) > PHOTO_LIMIT:
            raise bad_request("PHOTO_SAVE_FILE_INVALID")
        width, height = png_size(upload.content)
        if width == 0 or height == 0:
            raise bad_request("IMAGE_PROCESS_FAILED")
        if width + height > 10_000 or max(width, height) > 20 * min(width, height):
            raise bad_request("PHOTO_INVALID_DIMENSIONS")
        caption = p.text("caption") or ""
        parse_mode = p.text("parse_mode")
        shown = self._shown(caption, parse_mode, CAPTION_LIMIT, "message caption is too long")
        markup = check_reply_markup(p.json("reply_markup"))
        n = self.forum.next_file_number()
        photo = FakeDocument(
            f"photo-{n}", f"uphoto{n}", upload.filename, "image/png", upload.content, f"photos/file_{n}.png"
        )
        m = FakeMessage(self.forum.next_message_id(), thread_id, BOT_ID, shown, caption, parse_mode, markup)
        m.reply_to, m.photo = self._reply_to(p), photo
        return self.forum.message_json(self.forum.add_message(m))

    def _document(self, p: Params) -> FakeDocument:
        value = p.text("document")
        upload = p.files.get("document")
        if value and value.startswith("attach://"):
            upload = p.files.get(value.removeprefix("attach://"))
        elif value:
            known = self.forum.documents.get(value)
            if known is None:
                raise bad_request("wrong file identifier/HTTP URL specified")
            return known
        if upload is None:
            raise bad_request("there is no document in the request")
        n = self.forum.next_file_number()
        suffix = PurePosixPath(upload.filename).suffix
        doc = FakeDocument(
            f"doc-{n}",
            f"udoc{n}",
            upload.filename,
            upload.content_type,
            upload.content,
            f"documents/file_{n}{suffix}",
        )
        self.forum.documents[doc.file_id] = doc
        return doc

    def getFile(self, p: Params) -> Any:  # noqa: N802
        doc = self.forum.documents.get(p.required("file_id"))
        if doc is None:
            raise bad_request("invalid file_id")
        return {
            "file_id": doc.file_id,
            "file_unique_id": doc.file_unique_id,
            "file_size": len(doc.content),
            "file_path": doc.file_path,
        }

    def sendChatAction(self, p: Params) -> Any:  # noqa: N802
        self._chat(p)
        thread_id = self._thread(p)
        self.forum.chat_actions.append((thread_id, p.required("action")))
        return True

    def setMessageReaction(self, p: Params) -> Any:  # noqa: N802
        self._chat(p)
        m = self.forum.messages.get(p.required_integer("message_id"))
        if m is None or m.deleted:
            raise bad_request("MESSAGE_ID_INVALID")
        reaction = p.json("reaction") or []
        if not isinstance(reaction, list) or not all(
            isinstance(r, dict) and r.get("type") == "emoji" for r in reaction
        ):
            raise bad_request("REACTION_INVALID")
        m.reactions = [str(r.get("emoji", "")) for r in reaction]
        return True

    def answerCallbackQuery(self, p: Params) -> Any:  # noqa: N802
        query_id = p.required("callback_query_id")
        if self.forum.queries.pop(query_id, None) is None:
            raise bad_request("query is too old and response timeout expired or query ID is invalid")
        self.forum.answers.append(CallbackAnswer(query_id, p.text("text"), p.flag("show_alert")))
        return True

    # --- forum topics -------------------------------------------------------------------------------------

    def createForumTopic(self, p: Params) -> Any:  # noqa: N802
        self._chat(p)
        name = self._topic_name(p.text("name"))
        color = p.integer("icon_color")
        if color is not None and color not in ICON_COLORS:
            raise bad_request("TOPIC_ICON_COLOR_INVALID")
        topic = self.forum.open_topic(name, color or ICON_COLORS[0], p.text("icon_custom_emoji_id") or None)
        return self.forum.topic_json(topic)

    def editForumTopic(self, p: Params) -> Any:  # noqa: N802
        topic = self._topic(p)
        name, emoji = p.text("name"), p.text("icon_custom_emoji_id")
        new_name = topic.name if name is None else self._topic_name(name)
        new_emoji = topic.icon_custom_emoji_id if emoji is None else (emoji or None)
        if (new_name, new_emoji) == (topic.name, topic.icon_custom_emoji_id):
            raise bad_request("TOPIC_NOT_MODIFIED")
        topic.name, topic.icon_custom_emoji_id = new_name, new_emoji
        return True

    def closeForumTopic(self, p: Params) -> Any:  # noqa: N802
        return self._set_closed(self._topic(p), True)

    def reopenForumTopic(self, p: Params) -> Any:  # noqa: N802
        return self._set_closed(self._topic(p), False)

    @staticmethod
    def _set_closed(topic: FakeTopic, closed: bool) -> bool:
        if topic.closed == closed:
            raise bad_request("TOPIC_NOT_MODIFIED")
        topic.closed = closed
        return True

    def deleteForumTopic(self, p: Params) -> Any:  # noqa: N802
        topic = self._topic(p)
        topic.deleted = True
        for m in self.forum.messages.values():
            if m.thread_id == topic.thread_id:
                m.deleted = True
        return True
