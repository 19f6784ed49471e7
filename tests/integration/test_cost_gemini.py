"""Output and tokens of a real Gemini CLI agent (0.61.0, offline against the scripted Gemini API): its hooks
name its chat log, the worker's tail puts the turn's text and tool calls on `out:<agent>`, `ib cost`
counts the tokens the API said each answer used and prices them, and the turn's `complete` event carries
the session's total."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import redis

from bus.wire.keys import Keys
from tests.bot_process import worker_running
from tests.cli import IbRunner
from tests.fake_gemini.script import reply, shell
from tests.fake_gemini.server import FakeGemini
from tests.fake_gemini.wire import usage
from tests.reads import pane_text
from tests.streams import stream_entries
from tests.waiting import retry_until
from worker.markers import COMPLETION_MARKER

pytestmark = [pytest.mark.gemini, pytest.mark.timeout(300)]
TURN = 90.0  # deadline for one turn of a cold CLI (about 5 s to start, hooks of ~0.3 s each) on 2 busy cores
SHELL_DIALOG = "Allow execution of [Shell]?"
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "gemini-0.61.0"


def test_a_gemini_turn_s_output_and_tokens_reach_the_feed_and_ib_cost(
    gemini_ib: IbRunner, gemini: FakeGemini, rds: redis.Redis, keys: Keys, tmp_path: Path
) -> None:
    """With the worker running: its relay takes the hooks (the box holds no bus address), its tail reads
    the chat log."""
    with worker_running(gemini_ib, tmp_path / "worker.log", rds, keys):
        _turn_counted(gemini_ib, gemini, rds, keys)


def _turn_counted(gemini_ib: IbRunner, gemini: FakeGemini, rds: redis.Redis, keys: Keys) -> None:
    turns = (
        reply("Making it.", shell("touch made.txt && echo made")),
        reply(f"Made the file.\n{COMPLETION_MARKER}"),
    )
    gemini.script(*turns)
    spawned = gemini_ib.run("new-agent", "make a file", "--name", "maker", "--cli", "gemini")
    assert spawned.returncode == 0, spawned.stderr
    retry_until(lambda: SHELL_DIALOG in pane_text(gemini_ib, "maker"), TURN, what="the dialog")
    assert gemini_ib.run("approve", "maker").returncode == 0

    def completed() -> dict[str, Any] | None:
        events = [json.loads(fields["e"]) for _id, fields in stream_entries(rds, keys.events)]
        return next((e for e in events if e["type"] == "complete" and e["agent"] == "maker"), None)

    event = retry_until(completed, TURN, 0.2, "the turn's end")
    said = [usage(turn) for turn in turns]  # what the scripted API said each answer used
    expected = {
        "answers": 2,
        "input": sum(u["promptTokenCount"] for u in said),
        "cache_read": 0,
        "cache_write": 0,
        "output": sum(u["candidatesTokenCount"] for u in said),
    }

    def counted() -> dict[str, Any] | None:
        shown = gemini_ib.run("cost", "maker", "--json")
        total: dict[str, Any] = json.loads(shown.stdout)["total"] if shown.returncode == 0 else {}
        return total if total.get("answers") == 2 else None

    total = retry_until(counted, 30, 0.2, "ib cost to count both answers")
    assert {kind: total[kind] for kind in expected} == expected
    assert {kind: event["data"]["usage"][kind] for kind in expected} == expected
    # gemini-2.5-flash: $0.30 a million input, $2.50 output
    usd = (expected["input"] * 0.30 + expected["output"] * 2.50) / 1e6
    assert total["unpriced"] == [] and total["usd"] == pytest.approx(usd)

    items = [(f["kind"], f["text"]) for _id, f in stream_entries(rds, keys.output("maker"))]
    end = items.index(("turn_end", "")) if ("turn_end", "") in items else len(items)
    assert [kind for kind, _text in items[:end]] == ["prompt", "text", "tool_use", "tool_result", "text"]
    assert items[1:3] == [("text", "Making it."), ("tool_use", "**Bash**(touch made.txt && echo made)")]
    assert items[3][1].startswith("Output ") and items[4] == ("text", f"Made the file.\n{COMPLETION_MARKER}")


def test_the_chat_log_is_recorded_when_a_turn_starts(ib: IbRunner, rds: redis.Redis, keys: Keys) -> None:
    """BeforeAgent names the chat log (a real payload): the worker's tail reads the first turn while it
    runs, not only once AfterAgent ended it."""
    hooks = FIXTURES / "hooks-one-session.jsonl"
    started = next(
        p
        for line in hooks.read_text().splitlines()
        if (p := json.loads(line))["hook_event_name"] == "BeforeAgent"
    )
    rds.hset(keys.agent("g1"), mapping={"id": "g1", "project": "p", "state": "waiting"})
    done = ib.run("hook", "gemini", stdin=json.dumps(started), env={"IB_AGENT_ID": "g1"})
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    assert rds.hget(keys.agent("g1"), "transcript_path") == started["transcript_path"]
    assert rds.hget(keys.agent("g1"), "state") == "running"
