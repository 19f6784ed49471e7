"""The real Gemini CLI (pinned) against the scripted Gemini API, started by `ib new-agent --cli gemini`, its
worker running: `ib send` submits every message whole, whatever it holds (several lines, a leading `?`, which
0.61.0 takes as its shortcuts key when typed, a `!`, its shell mode, 10,000 characters, 50 lines), an empty
one is refused in one line, and a turn whose answer streams a character at a time ends `complete`, read from
the whole answer."""

from __future__ import annotations

import functools

import pytest
import redis

from bus.wire.keys import Keys
from tests.bot_process import Worker
from tests.cli import IbRunner
from tests.fake_gemini.script import reply
from tests.fake_gemini.server import FakeGemini, Request
from tests.integration.test_gemini_agents import TURN, _events_all, _spawn, _wait_event, gemini_worker
from tests.reads import pane_text
from worker.markers import COMPLETION_MARKER, WAITING_MARKER

pytestmark = [pytest.mark.gemini, pytest.mark.timeout(600)]
__all__ = ["gemini_worker"]  # the fixture, used by name

TEXTS = [
    "line one\nline two",
    "?what now",  # typed into an empty box, the `?` opens Gemini CLI's shortcuts instead
    "what was the codeword? say it",
    "!not a shell command",
    "0123456789" * 1000,
    "\n".join(f"line {n}" for n in range(50)),
    "ok",
]


def test_ib_send_submits_every_message_whole(
    gemini_ib: IbRunner, gemini: FakeGemini, rds: redis.Redis, keys: Keys, gemini_worker: Worker
) -> None:
    gemini.script(
        reply(f"Ready.\n{WAITING_MARKER}"), *[reply(f"Got {n}.\n{WAITING_MARKER}") for n in range(9)]
    )
    _spawn(gemini_ib, "reader", "wait for my messages")
    _wait_event(rds, keys, "waiting")
    for count, text in enumerate(TEXTS, start=2):
        sent = gemini_ib.run("send", "reader", text)
        assert sent.returncode == 0, sent.stderr
        try:
            gemini.wait_for(functools.partial(_turns_at_least, count), TURN, what=f"turn {count}")
        except AssertionError as e:  # what the send left on screen says why (seen once in a full run)
            raise AssertionError(f"{e}\nthe agent's screen:\n{pane_text(gemini_ib, 'reader')}") from None
        _wait_event(rds, keys, "waiting", count)
    assert [r.user_text() for r in gemini.turns_taken()[1:]] == TEXTS
    for empty in ("", "\n"):
        refused = gemini_ib.run("send", "reader", empty)
        assert refused.returncode != 0
        assert refused.stderr.strip().count("\n") == 0 and "nothing to send" in refused.stderr
    assert len(gemini.turns_taken()) == len(TEXTS) + 1  # nothing typed for them


def _turns_at_least(count: int, log: list[Request]) -> bool:
    return sum(r.is_turn for r in log) >= count


def test_an_answer_streamed_a_character_at_a_time_completes(
    gemini_ib: IbRunner, gemini: FakeGemini, rds: redis.Redis, keys: Keys, gemini_worker: Worker
) -> None:
    """0.61.0 hands AfterAgent a garbled `prompt_response` for a streamed answer (its pieces again, spaced):
    the turn's end is read from the chat log, which keeps the answer whole."""
    answer = f"Working on it step by step.\nAll steps done.\n\n{COMPLETION_MARKER}"
    gemini.script(reply(answer, chunk_chars=1))
    _spawn(gemini_ib, "streamer", "do the steps")
    done = _wait_event(rds, keys, "complete")
    data = done["data"]
    assert isinstance(data, dict) and data["last_message"] == answer
    assert "waiting" not in [e["type"] for e in _events_all(rds, keys)]
