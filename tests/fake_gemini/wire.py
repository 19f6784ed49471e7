"""The Gemini API's wire format for a scripted turn: the server-sent events of
`streamGenerateContent?alt=sse` (one `GenerateContentResponse` JSON per event, the last with
`finishReason: STOP` and the usage), the JSON of a `generateContent` answer, and error bodies. Pure."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from tests.fake_gemini.script import ApiError, Call, Part, Reply, Text


def frame(chunk: dict[str, Any]) -> bytes:
    """One server-sent event as the API frames it (data only, CRLF-separated)."""
    return f"data: {json.dumps(chunk, ensure_ascii=False)}\r\n\r\n".encode()


def usage(reply: Reply) -> dict[str, int]:
    written = sum(len(p.text) if isinstance(p, Text) else len(json.dumps(p.args)) for p in reply.parts)
    out = max(1, written // 4)
    return {"promptTokenCount": 1200, "candidatesTokenCount": out, "totalTokenCount": 1200 + out}


def _part_json(part: Part) -> dict[str, Any]:
    if isinstance(part, Call):
        return {"functionCall": {"name": part.name, "args": part.args}}
    return {"text": part.text}


def _chunk(parts: list[dict[str, Any]], model: str, finish: bool = False) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"parts": parts, "role": "model"}, "index": 0}
    if finish:
        candidate["finishReason"] = "STOP"
    return {"candidates": [candidate], "modelVersion": model, "responseId": "fake-gemini"}


def stream_parts(reply: Reply, model: str) -> Iterator[dict[str, Any]]:
    """The content chunks: text cut into pieces of `reply.chunk_chars`, each function call whole."""
    size = max(1, reply.chunk_chars)
    for part in reply.parts:
        if isinstance(part, Text):
            for start in range(0, max(len(part.text), 1), size):
                yield _chunk([{"text": part.text[start : start + size]}], model)
        else:
            yield _chunk([_part_json(part)], model)


def stream_chunks(reply: Reply, model: str) -> list[dict[str, Any]]:
    """Every chunk of the stream: the last one carries the finish reason and the usage beside the
    reply's last piece, as the API sends it (an extra empty chunk makes 0.61.0 repeat the piece before
    it in AfterAgent's `prompt_response`)."""
    chunks = list(stream_parts(reply, model)) or [_chunk([{"text": ""}], model)]
    last = chunks[-1]
    last["candidates"][0]["finishReason"] = "STOP"
    last["usageMetadata"] = usage(reply)
    return chunks


def response_json(reply: Reply, model: str) -> dict[str, Any]:
    """A whole `generateContent` answer."""
    whole = _chunk([_part_json(p) for p in reply.parts], model, finish=True)
    return whole | {"usageMetadata": usage(reply)}


def error_json(error: ApiError) -> dict[str, Any]:
    made: dict[str, Any] = {"code": error.status, "message": error.message, "status": error.code}
    return {"error": made | ({"details": list(error.details)} if error.details else {})}
