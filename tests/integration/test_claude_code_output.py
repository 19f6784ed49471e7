"""What the worker publishes of a real Claude Code transcript on `out:<agent>`: the turn starts with a
`prompt` item, and the model's answers carry the context's size (`tokens`), which the live status line
shows."""

from __future__ import annotations

import json

import pytest
import redis

from bus.wire.keys import Keys
from tests.cli import IbRunner
from tests.fake_anthropic import FakeAnthropic, reply
from tests.streams import stream_entries
from tests.waiting import retry_until

pytestmark = pytest.mark.claude
TURN_TIMEOUT = 90.0


def test_a_real_turn_on_the_output_stream(
    claude_ib: IbRunner, anthropic: FakeAnthropic, rds: redis.Redis, keys: Keys
) -> None:
    anthropic.script(reply("Hello from the model.\n\nI HAVE COMPLETED THE GOAL"))
    assert claude_ib.run("new-agent", "say hello", "--name", "greeter").returncode == 0

    def completed() -> bool:
        events = [json.loads(fields["e"]) for _id, fields in stream_entries(rds, keys.events)]
        return any(e["type"] == "complete" and e["agent"] == "greeter" for e in events)

    retry_until(completed, TURN_TIMEOUT, 0.2, "the turn's end")

    def items() -> list[dict[str, str]]:
        if claude_ib.run("worker", "--once").returncode != 0:
            return []  # a retried look: the next one tells, and the deadline fails the test
        return [fields for _id, fields in stream_entries(rds, keys.output("greeter"))]

    got = retry_until(lambda: [i for i in items() if i["kind"] == "text"], 30, 0.2, "the answer")
    kinds = [i["kind"] for i in items()]
    assert kinds[0] == "prompt" and kinds.count("prompt") == 1
    assert got[0]["text"].startswith("Hello from the model.")
    assert int(got[0]["tokens"]) > 0
