"""The Responses API's wire format for a scripted turn: the server-sent events of a streamed response
(response.created, output_item.added / output_text.delta / output_item.done per item, response.completed
with usage) and error bodies. Pure."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from tests.fake_openai.script import ApiError, FunctionCall, Item, Reply, Text

TEXT_CHUNK = 12  # characters per output_text.delta


def frame(event: dict[str, Any]) -> bytes:
    """One server-sent event, named by its type as the API does."""
    return f"event: {event['type']}\ndata: {json.dumps(event, ensure_ascii=False)}\n\n".encode()


def item_json(item: Item, item_id: str) -> dict[str, Any]:
    """An output item as `response.output_item.done` carries it."""
    if isinstance(item, Text):
        content = [{"type": "output_text", "text": item.text, "annotations": []}]
        return {
            "type": "message",
            "id": item_id,
            "role": "assistant",
            "status": "completed",
            "content": content,
        }
    if isinstance(item, FunctionCall):
        return {
            "type": "function_call",
            "id": item_id,
            "status": "completed",
            "call_id": item.call_id,
            "name": item.name,
            "arguments": item.arguments,
        }
    return {
        "type": "custom_tool_call",
        "id": item_id,
        "status": "completed",
        "call_id": item.call_id,
        "name": item.name,
        "input": item.input,
    }


def _opening(item: Item, item_id: str) -> dict[str, Any]:
    """The item as `response.output_item.added` announces it: a message still empty."""
    if isinstance(item, Text):
        return {"type": "message", "id": item_id, "role": "assistant", "status": "in_progress", "content": []}
    return {**item_json(item, item_id), "status": "in_progress"}


def stream_head(response_id: str, model: str) -> list[dict[str, Any]]:
    response = {
        "id": response_id,
        "object": "response",
        "status": "in_progress",
        "model": model,
        "output": [],
    }
    return [{"type": "response.created", "response": response}]


def stream_items(reply: Reply, item_ids: list[str]) -> Iterator[dict[str, Any]]:
    """Each item: announced, its text streamed in deltas, then done."""
    for index, (item, item_id) in enumerate(zip(reply.items, item_ids, strict=True)):
        yield {"type": "response.output_item.added", "output_index": index, "item": _opening(item, item_id)}
        if isinstance(item, Text):
            for chunk in _chunks(item.text):
                yield {
                    "type": "response.output_text.delta",
                    "item_id": item_id,
                    "output_index": index,
                    "content_index": 0,
                    "delta": chunk,
                }
        yield {"type": "response.output_item.done", "output_index": index, "item": item_json(item, item_id)}


def usage(reply: Reply) -> dict[str, Any]:
    output = max(1, sum(len(json.dumps(item_json(i, ""))) for i in reply.items) // 4)
    return {
        "input_tokens": 1200,
        "input_tokens_details": {"cached_tokens": 1000},
        "output_tokens": output,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 1200 + output,
    }


def stream_tail(reply: Reply, response_id: str, model: str) -> list[dict[str, Any]]:
    response = {
        "id": response_id,
        "object": "response",
        "status": "completed",
        "model": model,
        "usage": usage(reply),
    }
    return [{"type": "response.completed", "response": response}]


def _chunks(text: str) -> Iterator[str]:
    for start in range(0, max(1, len(text)), TEXT_CHUNK):
        yield text[start : start + TEXT_CHUNK]


def error_json(error: ApiError) -> dict[str, Any]:
    made = {"type": error.kind, "message": error.message, "code": error.code, "param": None}
    return {"error": made | dict(error.fields)}


def error_headers(error: ApiError, request_id: str) -> dict[str, str]:
    headers = {"x-request-id": request_id, "content-type": "application/json"}
    if error.retry_after is not None:
        headers["retry-after"] = str(error.retry_after)
    return headers | dict(error.headers)
