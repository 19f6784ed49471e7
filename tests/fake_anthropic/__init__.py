"""A scripted Anthropic Messages API for tests, so the real Claude Code CLI runs offline: SSE streams of
text and tool calls, API errors, a log of every request. See `FakeAnthropic`, the builders in `script`,
and `client` for starting the CLI against it."""

from __future__ import annotations

from tests.fake_anthropic.client import CLAUDE_CODE_VERSION, claude_binary, client_env, write_home
from tests.fake_anthropic.script import (
    ApiError,
    Deferred,
    Reply,
    Text,
    ToolUse,
    ask_user_question,
    bash,
    edit,
    exit_plan_mode,
    overloaded,
    rate_limited,
    read,
    reply,
    usage_limited,
    write,
)
from tests.fake_anthropic.server import API_KEY, FakeAnthropic, Request

__all__ = [
    "API_KEY",
    "CLAUDE_CODE_VERSION",
    "ApiError",
    "Deferred",
    "FakeAnthropic",
    "Reply",
    "Request",
    "Text",
    "ToolUse",
    "ask_user_question",
    "bash",
    "claude_binary",
    "client_env",
    "edit",
    "exit_plan_mode",
    "overloaded",
    "rate_limited",
    "read",
    "reply",
    "usage_limited",
    "write",
    "write_home",
]
