"""Output and tokens of a real Codex CLI agent (0.169.0, offline against the scripted Responses API): its
hooks name its session log, the worker's tail puts the turn's text and tool calls on `out:<agent>`, `ib
cost` counts the tokens the API said each answer used and prices them, and the turn's `complete` event
carries the session's total."""

from __future__ import annotations

import json
from typing import Any

import pytest
import redis

from bus.wire.keys import Keys
from tests.bot_process import Worker
from tests.cli import IbRunner
from tests.fake_openai import FakeOpenAI, exec_command, reply
from tests.fake_openai.sse import usage
from tests.streams import stream_entries
from tests.waiting import retry_until
from worker.markers import COMPLETION_MARKER

pytestmark = [pytest.mark.codex, pytest.mark.timeout(300)]
TURN = 90.0  # deadline for one turn of a cold CLI on 2 busy cores


def test_a_codex_turn_s_output_and_tokens_reach_the_feed_and_ib_cost(
    codex_ib: IbRunner, openai: FakeOpenAI, rds: redis.Redis, keys: Keys, codex_worker: Worker
) -> None:
    """With the worker running: its relay takes the hooks and notify (the box holds no bus address), its
    tail reads the session log."""
    turns = (
        reply("Listing first.", exec_command("ls && echo listed")),
        reply(f"Listed it.\n\n{COMPLETION_MARKER}"),
    )
    openai.script(*turns)
    spawned = codex_ib.run("new-agent", "--cli", "codex", "--name", "lister", "list the files")
    assert spawned.returncode == 0, spawned.stderr

    def completed() -> dict[str, Any] | None:
        events = [json.loads(fields["e"]) for _id, fields in stream_entries(rds, keys.events)]
        return next((e for e in events if e["type"] == "complete" and e["agent"] == "lister"), None)

    event = retry_until(completed, TURN, 0.2, "the turn's end")
    # what the scripted API said each answer used (the title thread's answer is in no session log)
    said = [usage(turn) for turn in turns]
    expected = {
        "answers": 2,
        "input": sum(u["input_tokens"] - u["input_tokens_details"]["cached_tokens"] for u in said),
        "cache_read": sum(u["input_tokens_details"]["cached_tokens"] for u in said),
        "cache_write": 0,
        "output": sum(u["output_tokens"] for u in said),
    }

    def counted() -> dict[str, Any] | None:
        shown = codex_ib.run("cost", "lister", "--json")
        total: dict[str, Any] = json.loads(shown.stdout)["total"] if shown.returncode == 0 else {}
        return total if total.get("answers") == 2 else None

    total = retry_until(counted, 30, 0.2, "ib cost to count both answers")
    assert {kind: total[kind] for kind in expected} == expected
    # gpt-5.5: $5 a million fresh input, $30 output, $0.50 cached input
    usd = (expected["input"] * 5 + expected["output"] * 30 + expected["cache_read"] * 0.5) / 1e6
    assert total["unpriced"] == [] and total["usd"] == pytest.approx(usd)
    assert event["data"]["usage"]["usd"] == pytest.approx(usd)
    assert {kind: event["data"]["usage"][kind] for kind in expected} == expected

    items = [(f["kind"], f["text"]) for _id, f in stream_entries(rds, keys.output("lister"))]
    end = items.index(("turn_end", "")) if ("turn_end", "") in items else len(items)
    assert [kind for kind, _text in items[:end]] == ["prompt", "text", "tool_use", "tool_result", "text"]
    assert items[1:3] == [("text", "Listing first."), ("tool_use", "**Bash**(ls && echo listed)")]
    assert items[3][1].startswith("Output ") and items[4] == ("text", f"Listed it.\n\n{COMPLETION_MARKER}")
