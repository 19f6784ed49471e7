"""The fake Telegram Bot API over real HTTP, and the test API to drive it and read back what it shows.

`FakeTelegram` runs a ThreadingHTTPServer on 127.0.0.1 (a free port) in a thread. Point
python-telegram-bot at it with `base_url=fake.base_url` and `base_file_url=fake.base_file_url`.
"""

from __future__ import annotations

import copy
import json
import re
import threading
from collections.abc import Iterable
from email import policy
from email.parser import BytesParser
from http.server import BaseHTTPRequestHandler
from types import TracebackType
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from tests.fake_telegram.api import BotApi, Params, Upload
from tests.fake_telegram.errors import ApiError
from tests.fake_telegram.forum import BOT_ID, CallbackAnswer, FakeDocument, FakeMessage, FakeTopic, Forum
from tests.fake_telegram.limits import Clock, Limits, RateLimiter
from tests.loopback import LoopbackServer, close, serve

DEFAULT_TOKEN = "123456:fake-telegram-test-token"
# Everything that puts or changes a message in the group counts towards its flood limits.
MESSAGE_METHODS = frozenset({"sendmessage", "senddocument", "sendphoto"})
EDIT_METHODS = frozenset({"editmessagetext", "editmessagereplymarkup", "editmessagecaption"})
HELD_RETRY_AFTER = 2  # Telegram seconds a held chat asks to wait (hold_messages)
LIMITED_METHODS = MESSAGE_METHODS | EDIT_METHODS

_API_PATH = re.compile(r"/bot(?P<token>[^/]+)/(?P<method>[A-Za-z]+)/?")
_FILE_PATH = re.compile(r"/file/bot(?P<token>[^/]+)/(?P<path>.+)")


class FakeTelegram:
    """A forum supergroup behind a fake Bot API.

    Limits: messages and edits alike (sendMessage, sendDocument, editMessageText,
    editMessageReplyMarkup) are flood-limited per chat (about 1 a second with a burst of 3, and 20 a
    minute in the group); over that the answer is 429 with `retry_after`. `time_scale` speeds the
    fake's clock up (60: a minute of limits passes in a real second); retry_after is in the fake's own
    (Telegram) seconds, as Telegram states it, so a client whose limits run scaled must scale it too.
    `advance(seconds)` moves the clock forward at once; `limits_enabled = False` switches the limits
    off.
    """

    def __init__(
        self,
        token: str = DEFAULT_TOKEN,
        *,
        time_scale: float = 1.0,
        limits: bool = True,
        rates: Limits | None = None,
        limited_methods: Iterable[str] = LIMITED_METHODS,
    ) -> None:
        self.token = token
        self.forum = Forum()
        self.limits_enabled = limits
        self.limited_methods = frozenset(m.lower() for m in limited_methods)
        self._clock = Clock(time_scale)
        self._limiter = RateLimiter(self._clock, rates)
        self._api = BotApi(self.forum)
        self._held = False  # hold_messages(): every message and edit answered 429, as in a long flood wait
        self._httpd: _Server | None = None
        self._thread: threading.Thread | None = None

    # --- lifecycle --------------------------------------------------------------------------------------

    def start(self, port: int = 0) -> FakeTelegram:
        """Serve on `port` (0: a free one)."""
        self._httpd = _Server(("127.0.0.1", port), _Handler)
        self._httpd.fake = self
        self._thread = serve(self._httpd, "fake-telegram")
        return self

    def stop(self) -> None:
        with self.forum.cond:
            self.forum.closed = True
            self.forum.cond.notify_all()
        close(self._httpd, self._thread)

    def __enter__(self) -> FakeTelegram:
        return self.start()

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError(
                "the fake Telegram is not started; call start() or use it as a context manager"
            )
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/bot"

    @property
    def base_file_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/file/bot"

    @property
    def chat_id(self) -> int:
        return self.forum.chat_id

    @property
    def bot_id(self) -> int:
        return BOT_ID

    # --- the Bot API ----------------------------------------------------------------------------------

    def call(self, method: str, params: Params) -> Any:
        """Answer one Bot API call: its result, or ApiError (flood limits first, then the method's checks)."""
        name = method.lower()
        handler = self._api.methods.get(name)
        if handler is None:
            raise ApiError(404, "Not Found")
        limited = name in self.limited_methods and self.limits_enabled
        chat = str(params.text("chat_id"))
        with self.forum.cond:
            self.forum.calls[name] += 1
            if self._held and name in self.limited_methods:
                self.forum.rejected_429 += 1
                raise ApiError(429, f"Too Many Requests: retry after {HELD_RETRY_AFTER}", HELD_RETRY_AFTER)
            if limited and (wait := self._limiter.wait(chat)) > 0:
                self.forum.rejected_429 += 1
                retry_after = self._clock.retry_after(wait)
                raise ApiError(429, f"Too Many Requests: retry after {retry_after}", retry_after)
            result = handler(params)
            if limited:
                self._limiter.record(chat)
            if name in MESSAGE_METHODS:
                self.forum.sent += 1
            elif name in EDIT_METHODS:
                self.forum.edited += 1
            return result

    def file_content(self, file_path: str) -> bytes | None:
        with self.forum.cond:
            doc = next((d for d in self.forum.documents.values() if d.file_path == file_path), None)
            return None if doc is None else doc.content

    # --- the test API: clock and counters --------------------------------------------------------------

    @property
    def time_scale(self) -> float:
        return self._clock.time_scale

    @time_scale.setter
    def time_scale(self, value: float) -> None:
        with self.forum.cond:
            self._clock.time_scale = value

    def hold_messages(self) -> None:
        """From now on every message and edit is refused with 429 (retry after HELD_RETRY_AFTER), as in a
        chat that is flooded for a while, until `release_messages()`: what the bot read stays unaccepted."""
        with self.forum.cond:
            self._held = True

    def release_messages(self) -> None:
        with self.forum.cond:
            self._held = False

    def advance(self, seconds: float) -> None:
        """Move the fake's clock forward: flood limits that would pass in `seconds` pass now."""
        with self.forum.cond:
            self._clock.advance(seconds)

    @property
    def sent(self) -> int:
        """Messages accepted (sendMessage, sendDocument and sendPhoto)."""
        with self.forum.cond:
            return self.forum.sent

    @property
    def edited(self) -> int:
        """Edits accepted (editMessageText, editMessageReplyMarkup)."""
        with self.forum.cond:
            return self.forum.edited

    @property
    def rejected_429(self) -> int:
        with self.forum.cond:
            return self.forum.rejected_429

    def calls(self, method: str) -> int:
        """How many times a method was called (any outcome)."""
        with self.forum.cond:
            return self.forum.calls[method.lower()]

    # --- the test API: what people do ------------------------------------------------------------------

    def inject_message(
        self, user_id: int, text: str, thread_id: int | None = None, reply_to: int | None = None
    ) -> int:
        """A person writes `text` in a topic (None: General); returns its id. Queued for getUpdates."""
        with self.forum.cond:
            return self.forum.inject_message(user_id, text, thread_id, reply_to)

    def inject_callback(self, user_id: int, message_id: int, data: str) -> str:
        """A person presses a button of a message (any data: forged ones too); returns the query id."""
        with self.forum.cond:
            return self.forum.inject_callback(user_id, message_id, data)

    def start_private_chat(self, user_id: int) -> None:
        """A person presses Start in a private chat with the bot, so that it may message them there."""
        with self.forum.cond:
            self.forum.start_private_chat(user_id)

    def direct_texts(self, user_id: int) -> list[str]:
        """The visible texts the bot sent to one person in their private chat, oldest first."""
        with self.forum.cond:
            return [m.text for user, m, _at in self.forum.direct if user == user_id]

    def direct_arrivals(self, user_id: int) -> list[tuple[float, str]]:
        """(time.monotonic() it came, visible text) of each message the bot sent one person privately."""
        with self.forum.cond:
            return [(at, m.text) for user, m, at in self.forum.direct if user == user_id]

    def create_topic(self, name: str) -> int:
        """A person opens a topic (say, the project topic); returns its message_thread_id."""
        with self.forum.cond:
            return self.forum.open_topic(name).thread_id

    # --- the test API: what the forum shows ------------------------------------------------------------

    def topic_texts(self, thread_id: int | None) -> list[str]:
        """The visible texts (captions for documents) of a topic's messages, oldest first; None: General."""
        return [m.text for m in self.messages(thread_id)]

    def messages(self, thread_id: int | None) -> list[FakeMessage]:
        """Copies of a topic's messages (the bot's and people's), oldest first; None: General."""
        with self.forum.cond:
            return self.forum.shown(thread_id)

    def message(self, message_id: int) -> FakeMessage | None:
        with self.forum.cond:
            m = self.forum.messages.get(message_id)
            return copy.deepcopy(m)

    def topics(self, include_deleted: bool = False) -> list[FakeTopic]:
        with self.forum.cond:
            return [copy.deepcopy(t) for t in self.forum.topics.values() if include_deleted or not t.deleted]

    def topic(self, thread_id: int) -> FakeTopic | None:
        with self.forum.cond:
            return copy.deepcopy(self.forum.topics.get(thread_id))

    def find_topic(self, name: str) -> FakeTopic | None:
        """The live topic with this exact name, if any."""
        return next((t for t in self.topics() if t.name == name), None)

    def documents(self) -> list[FakeDocument]:
        with self.forum.cond:
            return [copy.deepcopy(d) for d in self.forum.documents.values()]

    @property
    def callback_answers(self) -> list[CallbackAnswer]:
        with self.forum.cond:
            return copy.deepcopy(self.forum.answers)

    @property
    def chat_actions(self) -> list[tuple[int | None, str]]:
        with self.forum.cond:
            return list(self.forum.chat_actions)

    def commands(self) -> list[dict[str, str]]:
        """The default-scope command list set with setMyCommands."""
        with self.forum.cond:
            return copy.deepcopy(self.forum.commands.get('{"type": "default"}|', []))

    def pending_updates(self) -> int:
        with self.forum.cond:
            return len(self.forum.updates)


class _Server(LoopbackServer):
    fake: FakeTelegram


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body go out in two writes; no 40 ms delayed-ACK stall
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: tests read the fake's state, not its access log."""

    def do_GET(self) -> None:
        path = unquote(urlsplit(self.path).path)
        if m := _FILE_PATH.fullmatch(path):
            content = self.server.fake.file_content(m.group("path"))
            if m.group("token") != self.server.fake.token or content is None:
                self._reply(404, b'{"ok":false,"error_code":404,"description":"Not Found"}')
            else:
                self._reply(200, content, "application/octet-stream")
            return
        self._api(path)

    def do_POST(self) -> None:
        self._api(unquote(urlsplit(self.path).path))

    def _api(self, path: str) -> None:
        fake = self.server.fake
        body = self._body()
        try:
            m = _API_PATH.fullmatch(path)
            if m is None:
                raise ApiError(404, "Not Found")
            if m.group("token") != fake.token:
                raise ApiError(401, "Unauthorized")
            result = fake.call(m.group("method"), self._params(body))
            status, answer = 200, {"ok": True, "result": result}
        except ApiError as e:
            status, answer = e.code, e.body()
        except Exception as e:  # a bug of the fake: answer, so the client's test fails with the reason
            status, answer = 500, {"ok": False, "error_code": 500, "description": f"fake Telegram bug: {e!r}"}
        self._reply(status, json.dumps(answer, ensure_ascii=False).encode())

    def _body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            chunks = []
            while size := int(self.rfile.readline().split(b";")[0].strip() or b"0", 16):
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
            self.rfile.readline()
            return b"".join(chunks)
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def _params(self, body: bytes) -> Params:
        values: dict[str, Any] = {k: v[-1] for k, v in parse_qs(urlsplit(self.path).query).items()}
        kind = self.headers.get("Content-Type", "")
        if kind.startswith("application/json") and body:
            try:
                decoded = json.loads(body)
            except ValueError:
                raise ApiError(400, "Bad Request: can't parse JSON encoded request") from None
            values.update(decoded if isinstance(decoded, dict) else {})
        elif kind.startswith("application/x-www-form-urlencoded"):
            form = parse_qs(body.decode("utf-8"), keep_blank_values=True)
            values.update({k: v[-1] for k, v in form.items()})
        elif kind.startswith("multipart/form-data"):
            fields, files = _multipart(kind, body)
            values.update(fields)
            return Params(values, files)
        return Params(values)

    def _reply(self, status: int, body: bytes, kind: str = "application/json") -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def _multipart(content_type: str, body: bytes) -> tuple[dict[str, str], dict[str, Upload]]:
    head = f"Content-Type: {content_type}\r\nMIME-Version: 1.0\r\n\r\n".encode()
    message = BytesParser(policy=policy.HTTP).parsebytes(head + body)
    fields: dict[str, str] = {}
    files: dict[str, Upload] = {}
    for part in message.iter_parts():
        name = str(part.get_param("name", header="content-disposition") or "")
        decoded = part.get_payload(decode=True)
        payload = decoded if isinstance(decoded, bytes) else b""
        filename = part.get_filename()
        if filename is None:
            fields[name] = payload.decode("utf-8")
        else:
            files[name] = Upload(filename, part.get_content_type(), payload)
    return fields, files
