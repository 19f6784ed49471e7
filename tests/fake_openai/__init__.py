"""A scripted OpenAI Responses API for tests, so the real Codex CLI runs offline: SSE streams of messages,
`exec_command` and `apply_patch` calls, HTTP errors, a log of every request. See `FakeOpenAI`, the builders
in `script`, and `client` for starting the CLI against it."""

from __future__ import annotations

from tests.fake_openai.client import CODEX_VERSION, client_env, codex_binary, write_codex_home
from tests.fake_openai.script import (
    ApiError,
    CustomToolCall,
    FunctionCall,
    Reply,
    Text,
    add_file,
    apply_patch,
    exec_command,
    near_usage_limits,
    rate_limited,
    reply,
    server_error,
    usage_limit_reached,
)
from tests.fake_openai.server import API_KEY, FakeOpenAI, Request

__all__ = [
    "API_KEY",
    "CODEX_VERSION",
    "ApiError",
    "CustomToolCall",
    "FakeOpenAI",
    "FunctionCall",
    "Reply",
    "Request",
    "Text",
    "add_file",
    "apply_patch",
    "client_env",
    "codex_binary",
    "exec_command",
    "near_usage_limits",
    "rate_limited",
    "reply",
    "server_error",
    "usage_limit_reached",
    "write_codex_home",
]
