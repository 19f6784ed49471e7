"""The real Claude Code (pinned) against the scripted Messages API, started by `ib new-agent`: `ib send`
submits every message whole, whatever it holds (several lines, a leading `?`, 10,000 characters, 50 lines),
and one that starts with `!` as a message, not as a command for Claude Code's bash mode."""

from __future__ import annotations

import functools
import json
import re

import pytest
import redis

from bus.wire.keys import Keys
from tests.cli import IbRunner
from tests.fake_anthropic import FakeAnthropic, reply
from tests.integration.test_gemini_send import TEXTS
from tests.streams import stream_entries
from tests.waiting import retry_until
from worker.markers import WAITING_MARKER

pytestmark = [pytest.mark.claude, pytest.mark.timeout(600)]
PASTED = re.compile(
    r'\n\n<pasted_content id="(?P<id>\w+)">\n(?P<text>.*)\n</pasted_content id="(?P=id)">\n', re.S
)
TURN = 90.0  # a cold CLI start on 2 busy cores takes a few seconds; this is the deadline only


def _turns_ended(rds: redis.Redis, keys: Keys, count: int) -> bool:
    found = [json.loads(f["e"]) for _i, f in stream_entries(rds, keys.events)]
    return len([e for e in found if e["type"] == "waiting" and e.get("agent") == "reader"]) >= count


def test_ib_send_submits_every_message_whole(
    claude_ib: IbRunner, anthropic: FakeAnthropic, rds: redis.Redis, keys: Keys
) -> None:
    anthropic.script(
        reply(f"Ready.\n\n{WAITING_MARKER}"), *[reply(f"Got {n}.\n\n{WAITING_MARKER}") for n in range(9)]
    )
    spawned = claude_ib.run("new-agent", "wait for my messages", "--name", "reader")
    assert spawned.returncode == 0, spawned.stderr
    retry_until(functools.partial(_turns_ended, rds, keys, 1), TURN, what="the first turn's end")
    for count, text in enumerate(TEXTS, start=2):
        sent = claude_ib.run("send", "reader", text)
        assert sent.returncode == 0, sent.stderr
        retry_until(functools.partial(_turns_ended, rds, keys, count), TURN, what=f"turn {count}")
    # a `!` first is Claude Code's bash mode, typed or pasted: the space that keeps it a message stays
    assert [_unwrapped(t) for t in anthropic.user_texts()[1:]] == [
        f" {text}" if text.startswith("!") else text for text in TEXTS
    ]


def _unwrapped(received: str) -> str:
    """The text as sent: Claude Code hands the model a long paste inside its own tags."""
    found = PASTED.fullmatch(received)
    return found["text"] if found else received
