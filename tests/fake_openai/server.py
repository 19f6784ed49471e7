"""The scripted Responses API over real HTTP on loopback, and the test API to script it and read its log.

`FakeOpenAI` runs a ThreadingHTTPServer on 127.0.0.1 (a free port) in a thread; Codex CLI reaches it
through a `model_providers` entry whose `base_url` is `fake.base_url`. Codex sends only
`POST /v1/responses`. A request of the conversation (it offers the `exec_command` tool) takes the next
scripted turn; any other (the hidden thread that names the session) gets a short side answer. Every
request is logged with its kind and what it was answered.
"""

from __future__ import annotations

from typing import Any, ClassVar

from tests.fake_openai import sse
from tests.fake_openai.script import ApiError, Reply, Turn, reply
from tests.scripted_api import NOTHING_SCRIPTED, SIDE_ANSWER, LoggedRequest, ScriptedApi, ScriptedHandler

__all__ = ["API_KEY", "NOTHING_SCRIPTED", "SHELL_TOOL", "SIDE_ANSWER", "FakeOpenAI", "Request"]

API_KEY = "sk-proj-ittybus-test-key-0000000000000000000000000000-0123456789abcdef"
SHELL_TOOL = "exec_command"
# how the context Codex itself adds to a user message opens (the environment, AGENTS.md, instructions)
CONTEXT = ("<environment_context>", "<user_instructions>", "<permissions", "# AGENTS.md")


class Request(LoggedRequest):
    """One Responses API request (kind: turn, side, other) and what it was answered with."""

    def items(self) -> list[dict[str, Any]]:
        given = self.body.get("input")
        return [i for i in given if isinstance(i, dict)] if isinstance(given, list) else []

    def user_text(self) -> str | None:
        """What the person typed, when this request opens a turn: the text of the last input item when
        it is a user message (None when it carries tool output). Codex's own context (CONTEXT) is left
        out."""
        items = self.items()
        last = items[-1] if items else {}
        if last.get("role") != "user":
            return None
        texts = [
            str(part.get("text", ""))
            for part in last.get("content") or []
            if isinstance(part, dict) and part.get("type") == "input_text"
        ]
        said = [t for t in texts if not t.lstrip().startswith(CONTEXT)]
        return "\n".join(said) if said else None

    def tool_outputs(self) -> list[dict[str, Any]]:
        """The outputs of tool calls this request sends back (function and custom tool calls)."""
        kinds = ("function_call_output", "custom_tool_call_output")
        return [i for i in self.items() if i.get("type") in kinds]


def request_kind(body: dict[str, Any]) -> str:
    """`turn` for a request of the conversation (it offers the shell tool), else `side`."""
    tools = body.get("tools")
    names = {t.get("name") for t in tools if isinstance(t, dict)} if isinstance(tools, list) else set()
    return "turn" if SHELL_TOOL in names else "side"


class _Handler(ScriptedHandler["FakeOpenAI"]):
    not_found: ClassVar[dict[str, Any]] = {
        "error": {"type": "invalid_request_error", "message": "Not found", "code": None}
    }

    def frame(self, event: dict[str, Any]) -> bytes:
        return sse.frame(event)

    def post(self, raw: bytes, body: dict[str, Any] | None) -> None:
        if self.route == "/v1/responses" and body is not None:
            self._responses(body)
        else:
            self.do_GET()

    def _responses(self, body: dict[str, Any]) -> None:
        kind = request_kind(body)
        turn = self.fake.take(kind)
        model = str(body.get("model") or "gpt-test")
        request_id = self.fake.next_id("req")
        if isinstance(turn, ApiError):
            self.record(body, kind, f"error {turn.status}")
            self.send_json(turn.status, sse.error_json(turn), sse.error_headers(turn, request_id))
        else:
            self.record(body, kind, "stream")
            self._stream(turn, self.fake.next_id("resp"), model, request_id)
        self.fake.answered(kind)

    def _stream(self, turn: Reply, response_id: str, model: str, request_id: str) -> None:
        headers = {"Content-Type": "text/event-stream; charset=utf-8", "x-request-id": request_id}
        headers.update(turn.headers)
        item_ids = [self.fake.next_id("item") for _ in turn.items]
        events = (
            sse.stream_head(response_id, model),
            sse.stream_items(turn, item_ids),
            sse.stream_tail(turn, response_id, model),
        )
        self.send_stream(headers, events, turn.chunk_delay, turn.hold)


class FakeOpenAI(ScriptedApi[Turn, Request]):
    """A scripted OpenAI Responses API (see `ScriptedApi`)."""

    title = "Responses API"
    handler = _Handler
    root = "/v1"  # what a `model_providers` entry's `base_url` names

    def __init__(self) -> None:
        super().__init__(Request, reply(NOTHING_SCRIPTED))

    def take(self, kind: str) -> Turn:
        return self.next_turn() if kind == "turn" else reply(SIDE_ANSWER)
