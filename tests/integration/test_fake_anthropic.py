"""The scripted Messages API stand-in answers over HTTP as the API does: SSE streams, JSON, errors, a log."""

from __future__ import annotations

import http.client
import json
import threading
from typing import Any
from urllib.parse import urlsplit

from tests.fake_anthropic import FakeAnthropic, bash, overloaded, rate_limited, reply
from tests.fake_anthropic.server import COMPACT_ANSWER, NOTHING_SCRIPTED, SIDE_ANSWER
from tests.waiting import retry_until

TOOLS = [{"name": "Bash", "input_schema": {"type": "object"}}]
REMINDER = {"type": "text", "text": "<system-reminder>\ncontext\n</system-reminder>"}


def _post(fake: FakeAnthropic, path: str, body: dict[str, Any]) -> http.client.HTTPResponse:
    conn = http.client.HTTPConnection(urlsplit(fake.base_url).netloc, timeout=10)
    conn.request("POST", path, json.dumps(body), {"content-type": "application/json"})
    return conn.getresponse()


def _turn(text: str, *, stream: bool = True) -> dict[str, Any]:
    content = [REMINDER, {"type": "text", "text": text}]
    return {
        "model": "claude-x",
        "stream": stream,
        "tools": TOOLS,
        "messages": [{"role": "user", "content": content}],
    }


def _events(response: http.client.HTTPResponse) -> list[dict[str, Any]]:
    """Parse an SSE body; every `event:` name must equal its data's type."""
    events = []
    for frame in response.read().decode().split("\n\n"):
        if not frame.strip():
            continue
        name, data = (line.partition(": ")[2] for line in frame.split("\n"))
        event = json.loads(data)
        assert event["type"] == name
        events.append(event)
    return events


def test_a_streamed_turn_with_text_and_a_tool_call() -> None:
    with FakeAnthropic() as fake:
        fake.script(reply("Running the tests now.", bash("pytest -q")))
        response = _post(fake, "/v1/messages?beta=true", _turn("run the tests"))
        assert response.status == 200
        assert response.getheader("content-type", "").startswith("text/event-stream")
        events = _events(response)

    kinds = [e["type"] for e in events]
    assert kinds[:2] == ["message_start", "ping"] and kinds[-2:] == ["message_delta", "message_stop"]
    assert events[0]["message"]["content"] == [] and events[0]["message"]["stop_reason"] is None
    text = "".join(e["delta"]["text"] for e in events if e.get("delta", {}).get("type") == "text_delta")
    assert text == "Running the tests now."
    tool_start = next(e for e in events if e["type"] == "content_block_start" and e["index"] == 1)
    assert tool_start["content_block"]["name"] == "Bash" and tool_start["content_block"]["input"] == {}
    partial = "".join(e["delta"]["partial_json"] for e in events if e.get("index") == 1 and "delta" in e)
    assert json.loads(partial)["command"] == "pytest -q"
    assert [e["index"] for e in events if e["type"] == "content_block_stop"] == [0, 1]
    assert events[-2]["delta"]["stop_reason"] == "tool_use"


def test_log_keeps_the_exact_user_text_and_tells_turns_from_side_calls() -> None:
    typed = "-n is the flag; ends with @../file\nsecond line ünïcode"
    with FakeAnthropic() as fake:
        fake.script(reply("first"))
        assert _post(fake, "/v1/messages", _turn(typed)).read()
        side = {"model": "claude-haiku", "messages": [{"role": "user", "content": "title?"}], "max_tokens": 9}
        answer = json.loads(_post(fake, "/v1/messages", side).read())
        counted = json.loads(_post(fake, "/v1/messages/count_tokens", side).read())
        compact = json.loads(
            _post(fake, "/v1/messages", _turn("CRITICAL: Respond with TEXT ONLY.", stream=False)).read()
        )
        leftover = json.loads(_post(fake, "/v1/messages", _turn("again", stream=False)).read())
        log = fake.requests()

    assert fake.user_texts() == [typed, "again"]  # turns only: no side or compaction request
    assert [r.kind for r in log] == ["turn", "side", "count", "compact", "turn"]
    assert (
        answer["content"] == [{"type": "text", "text": SIDE_ANSWER}] and answer["stop_reason"] == "end_turn"
    )
    assert counted["input_tokens"] > 0
    assert compact["content"][0]["text"] == COMPACT_ANSWER
    assert leftover["content"][0]["text"] == NOTHING_SCRIPTED
    assert log[0].headers["content-type"] == "application/json"


def test_errors_have_the_api_shape_and_retry_headers() -> None:
    with FakeAnthropic() as fake:
        fake.script(rate_limited(retry_after=7), overloaded(retry=True))
        limited = _post(fake, "/v1/messages", _turn("a"))
        limited_body = json.loads(limited.read())
        busy = _post(fake, "/v1/messages", _turn("b"))
        busy_body = json.loads(busy.read())

    assert limited.status == 429 and limited.getheader("retry-after") == "7"
    assert limited.getheader("x-should-retry") == "false"
    assert limited.getheader("anthropic-ratelimit-requests-remaining") == "0"
    assert limited_body["type"] == "error" and limited_body["error"]["type"] == "rate_limit_error"
    assert busy.status == 529 and busy.getheader("x-should-retry") == "true"
    assert busy_body["error"] == {"type": "overloaded_error", "message": "Overloaded"}
    assert limited.getheader("request-id") != busy.getheader("request-id")


def test_a_held_stream_ends_only_when_released() -> None:
    hold = threading.Event()
    ended = threading.Event()
    with FakeAnthropic() as fake:
        fake.script(reply("working", hold=hold))

        def consume() -> None:
            _events(_post(fake, "/v1/messages", _turn("go")))
            ended.set()

        reader = threading.Thread(target=consume)
        reader.start()
        fake.wait_for(lambda log: len(log) == 1, what="the request")
        assert not ended.wait(0.3)  # held: message_stop has not been sent
        hold.set()
        assert ended.wait(10)
        reader.join()


def test_a_turn_is_noted_as_answered_once_its_last_byte_is_sent() -> None:
    hold = threading.Event()
    with FakeAnthropic() as fake:
        fake.script(reply("working", hold=hold), overloaded())
        reader = threading.Thread(target=lambda: _events(_post(fake, "/v1/messages", _turn("go"))))
        reader.start()
        fake.wait_for(lambda log: len(log) == 1, what="the request")
        held = fake.turn_ends()
        hold.set()
        reader.join()
        side = {"model": "claude-haiku", "messages": [{"role": "user", "content": "title?"}], "max_tokens": 9}
        assert _post(fake, "/v1/messages", side).read()
        assert _post(fake, "/v1/messages", _turn("again")).read()
        ends = retry_until(lambda: fake.turn_ends() if len(fake.turn_ends()) == 2 else [], what="two ends")
        log = fake.requests()

    assert held == []  # still streaming: the turn's outcome does not exist yet
    assert log[0].at < ends[0] < log[1].at < log[2].at <= ends[1]  # side calls are not turns
