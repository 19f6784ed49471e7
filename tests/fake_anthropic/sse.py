"""The Messages API's wire format for a scripted turn: the server-sent events of a streamed reply
(message_start, content_block_start / delta / stop, message_delta, message_stop), the JSON of a
non-streamed one, and error bodies. Pure."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from tests.fake_anthropic.script import ApiError, Block, Reply, Text, ToolUse

TEXT_CHUNK = 12  # characters per text_delta: enough deltas to look like a real stream
JSON_CHUNK = 16  # characters of tool input per input_json_delta


def frame(event: dict[str, Any]) -> bytes:
    """One server-sent event, named by its type as the API does."""
    return f"event: {event['type']}\ndata: {json.dumps(event, ensure_ascii=False)}\n\n".encode()


def _usage(output_tokens: int) -> dict[str, int]:
    """Counts of every kind, as a cached Claude Code turn has them (what `ib cost` adds up)."""
    return {
        "input_tokens": 100,
        "cache_creation_input_tokens": 1500,
        "cache_read_input_tokens": 12000,
        "output_tokens": output_tokens,
    }


def _message(reply: Reply | None, message_id: str, model: str) -> dict[str, Any]:
    return {
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [] if reply is None else [_block_json(b) for b in reply.blocks],
        "stop_reason": None if reply is None else reply.stop_reason,
        "stop_sequence": None,
        "usage": _usage(1 if reply is None else _tokens(reply)),
    }


def _block_json(block: Block) -> dict[str, Any]:
    if isinstance(block, Text):
        return {"type": "text", "text": block.text}
    return {"type": "tool_use", "id": block.id, "name": block.name, "input": block.input}


def _tokens(reply: Reply) -> int:
    return max(1, sum(len(json.dumps(_block_json(b))) for b in reply.blocks) // 4)


def message_json(reply: Reply, message_id: str, model: str) -> dict[str, Any]:
    """The body of a non-streamed answer."""
    return _message(reply, message_id, model)


def stream_head(message_id: str, model: str) -> list[dict[str, Any]]:
    return [{"type": "message_start", "message": _message(None, message_id, model)}, {"type": "ping"}]


def stream_blocks(reply: Reply) -> Iterator[dict[str, Any]]:
    """The content events of a reply, block by block, in chunks."""
    for index, block in enumerate(reply.blocks):
        if isinstance(block, Text):
            yield {
                "type": "content_block_start",
                "index": index,
                "content_block": {"type": "text", "text": ""},
            }
            for chunk in _chunks(block.text, TEXT_CHUNK):
                yield {
                    "type": "content_block_delta",
                    "index": index,
                    "delta": {"type": "text_delta", "text": chunk},
                }
        else:
            yield {"type": "content_block_start", "index": index, "content_block": _tool_start(block)}
            for chunk in _chunks(json.dumps(block.input, ensure_ascii=False), JSON_CHUNK):
                delta = {"type": "input_json_delta", "partial_json": chunk}
                yield {"type": "content_block_delta", "index": index, "delta": delta}
        yield {"type": "content_block_stop", "index": index}


def stream_tail(reply: Reply) -> list[dict[str, Any]]:
    return [
        {
            "type": "message_delta",
            "delta": {"stop_reason": reply.stop_reason, "stop_sequence": None},
            "usage": {"output_tokens": _tokens(reply)},
        },
        {"type": "message_stop"},
    ]


def _tool_start(block: ToolUse) -> dict[str, Any]:
    return {"type": "tool_use", "id": block.id, "name": block.name, "input": {}}


def _chunks(text: str, size: int) -> Iterator[str]:
    if not text:
        yield ""
    for start in range(0, len(text), size):
        yield text[start : start + size]


def error_json(error: ApiError, request_id: str) -> dict[str, Any]:
    return {
        "type": "error",
        "error": {"type": error.kind, "message": error.message},
        "request_id": request_id,
    }


def error_headers(error: ApiError, request_id: str) -> dict[str, str]:
    headers = {"request-id": request_id, "content-type": "application/json"}
    if error.retry_after is not None:
        headers["retry-after"] = str(error.retry_after)
    if error.status == 429:
        headers["anthropic-ratelimit-requests-limit"] = "50"
        headers["anthropic-ratelimit-requests-remaining"] = "0"
        headers["anthropic-ratelimit-requests-reset"] = "2030-01-01T00:00:00Z"
    headers["x-should-retry"] = "true" if error.retry else "false"
    headers.update(error.headers)
    return headers
