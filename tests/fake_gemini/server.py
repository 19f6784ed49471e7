"""The scripted Gemini API over real HTTP on loopback, and the test API to script it and read its log.

`FakeGemini` runs a ThreadingHTTPServer on 127.0.0.1 (a free port) in a thread. Gemini CLI talks to it
with `GOOGLE_GEMINI_BASE_URL=fake.base_url`. Every request is logged with its kind: a `turn` of the
conversation (a `streamGenerateContent` that offers tools) takes the next scripted turn; `side`
requests (the session summary, the next-speaker check and any other call the CLI makes on its own) get
a short answer of the shape they ask for; `count` (countTokens) gets a count.
"""

from __future__ import annotations

import json
import re
from typing import Any, ClassVar

from tests.fake_gemini import wire
from tests.fake_gemini.script import ApiError, Deferred, Reply, Turn, reply
from tests.scripted_api import NOTHING_SCRIPTED, SIDE_ANSWER, LoggedRequest, ScriptedApi, ScriptedHandler

__all__ = ["API_KEY", "NEXT_SPEAKER", "NOTHING_SCRIPTED", "SIDE_ANSWER", "FakeGemini", "Request"]

API_KEY = "AIzaSy-ittybus-test-key-00000000000000"
NEXT_SPEAKER = '{"reasoning": "The model answered; the user speaks next.", "next_speaker": "user"}'
_CONTEXT = "<session_context>"  # how Gemini CLI opens the context it sends with the first prompt
_METHOD = re.compile(r"^/v1(?:beta|alpha)?/models/(?P<model>[^/:]+):(?P<method>\w+)$")


class Request(LoggedRequest):
    """One Gemini API request (kind: turn, side, count, other) and what it was answered with."""

    def last_content(self) -> dict[str, Any]:
        contents = [c for c in self.body.get("contents") or [] if isinstance(c, dict)]
        return contents[-1] if contents else {}

    def user_text(self) -> str | None:
        """What the person typed in this turn: the text parts of the last user content but the CLI's own
        `<session_context>`; None when it only carries function responses."""
        last = self.last_content()
        if last.get("role") != "user":
            return None
        parts = [p for p in last.get("parts") or [] if isinstance(p, dict)]
        texts = [p["text"] for p in parts if "text" in p and not str(p["text"]).startswith(_CONTEXT)]
        return "\n".join(texts) if texts else None

    def function_responses(self) -> list[dict[str, Any]]:
        parts = self.last_content().get("parts") or []
        return [p["functionResponse"] for p in parts if isinstance(p, dict) and "functionResponse" in p]

    def tool_names(self) -> list[str]:
        """The functions the request offers the model."""
        tools = [t for t in self.body.get("tools") or [] if isinstance(t, dict)]
        return [d.get("name", "") for t in tools for d in t.get("functionDeclarations") or []]


def request_kind(method: str, body: dict[str, Any]) -> str:
    """`turn` for a streamed request of the conversation (it offers tools), `count`, else `side`."""
    if method == "countTokens":
        return "count"
    return "turn" if method == "streamGenerateContent" and body.get("tools") else "side"


class _Handler(ScriptedHandler["FakeGemini"]):
    not_found: ClassVar[dict[str, Any]] = {
        "error": {"code": 404, "message": "Not found", "status": "NOT_FOUND"}
    }

    def frame(self, event: dict[str, Any]) -> bytes:
        return wire.frame(event)

    def post(self, raw: bytes, body: dict[str, Any] | None) -> None:
        found = _METHOD.match(self.route)
        if found is None or body is None:
            self.do_GET()
            return
        method, model = found.group("method"), found.group("model")
        kind = request_kind(method, body)
        if kind == "count":
            self.record(body, kind, "count")
            self.send_json(200, {"totalTokens": max(1, len(raw) // 4)})
            return
        self._answer(method, model, kind, body)

    def _answer(self, method: str, model: str, kind: str, body: dict[str, Any]) -> None:
        turn = self.fake.take(kind, body)
        if isinstance(turn, Deferred):
            turn = turn.make([c for c in body.get("contents") or [] if isinstance(c, dict)])
        if isinstance(turn, ApiError):
            self.record(body, kind, f"error {turn.status}")
            self.send_json(turn.status, wire.error_json(turn))
        elif method == "streamGenerateContent":
            self.record(body, kind, "stream")
            self._stream(turn, model)
        else:
            self.record(body, kind, "json")
            self.send_json(200, wire.response_json(turn, model))
        self.fake.answered(kind)

    def _stream(self, turn: Reply, model: str) -> None:
        *chunks, last = wire.stream_chunks(turn, model)
        self.send_stream(
            {"Content-Type": "text/event-stream"}, ((), chunks, [last]), turn.chunk_delay, turn.hold
        )


class FakeGemini(ScriptedApi[Turn, Request]):
    """A scripted Gemini API (see `ScriptedApi`): side requests get an answer of the shape they ask for."""

    title = "Gemini API"
    handler = _Handler
    wait_timeout = 60.0

    def __init__(self) -> None:
        super().__init__(Request, reply(NOTHING_SCRIPTED))

    def take(self, kind: str, body: dict[str, Any]) -> Turn:
        if kind != "turn":
            return reply(NEXT_SPEAKER if "next_speaker" in json.dumps(body) else SIDE_ANSWER)
        return self.next_turn()
