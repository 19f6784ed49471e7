"""The real Codex CLI (pinned) against the scripted Responses API, started by `ib new-agent --cli codex`, its
worker running: `ib send` submits every message whole, whatever it holds (several lines, a leading `?`,
which Codex takes as its shortcuts key in an empty box when typed, a `!`, its shell mode, 10,000 characters,
50 lines): it goes as a paste (a typed `?` is lost), a leading `!` with a space before it, which Codex trims,
and the send reads Codex's input box (its last `›` line, "Ask Codex to do anything" or "Ask a follow-up
question" while empty) before and after Enter, pressing it again while the message stays there."""

from __future__ import annotations

import functools

import pytest
import redis

from bus.wire.keys import Keys
from tests.bot_process import Worker
from tests.cli import IbRunner
from tests.fake_openai import FakeOpenAI, near_usage_limits, reply
from tests.integration.test_codex_agent import TURN, _events
from tests.integration.test_gemini_send import TEXTS
from tests.reads import pane_text
from tests.waiting import retry_until
from worker.markers import WAITING_MARKER

pytestmark = [pytest.mark.codex, pytest.mark.timeout(600)]


def test_ib_send_submits_every_message_whole(
    codex_ib: IbRunner, openai: FakeOpenAI, rds: redis.Redis, keys: Keys, codex_worker: Worker
) -> None:
    openai.script(
        reply(f"Ready.\n\n{WAITING_MARKER}"), *[reply(f"Got {n}.\n\n{WAITING_MARKER}") for n in range(9)]
    )
    spawned = codex_ib.run("new-agent", "--cli", "codex", "--name", "reader", "wait for my messages")
    assert spawned.returncode == 0, spawned.stderr
    retry_until(lambda: _events(rds, keys, "waiting", "reader"), TURN, what="the first turn's end")
    for count, text in enumerate(TEXTS, start=2):
        sent = codex_ib.run("send", "reader", text)
        assert sent.returncode == 0, sent.stderr
        retry_until(functools.partial(_turns_ended, rds, keys, count), TURN, what=f"turn {count}")
    assert openai.user_texts()[1:] == TEXTS
    for empty in ("", "\n"):
        refused = codex_ib.run("send", "reader", empty)
        assert refused.returncode != 0
        assert refused.stderr.strip().count("\n") == 0 and "nothing to send" in refused.stderr
    assert len(openai.turns_taken()) == len(TEXTS) + 1  # nothing typed for them


def _turns_ended(rds: redis.Redis, keys: Keys, count: int) -> bool:
    return len(_events(rds, keys, "waiting", "reader")) >= count


def test_near_its_usage_limits_the_agent_is_not_stopped_by_the_switch_model_menu(
    codex_ib: IbRunner, openai: FakeOpenAI, rds: redis.Redis, keys: Keys, codex_worker: Worker
) -> None:
    """Near its limits Codex offers a cheaper model in a menu that nobody at an agent's screen answers, and a
    message typed then picked "Switch to …" and was lost: the agent's Codex is told not to offer it."""
    openai.script(
        near_usage_limits(reply(f"Ready.\n\n{WAITING_MARKER}")),
        near_usage_limits(reply(f"Got it.\n\n{WAITING_MARKER}")),
    )
    spawned = codex_ib.run("new-agent", "--cli", "codex", "--name", "reader", "wait for my messages")
    assert spawned.returncode == 0, spawned.stderr
    retry_until(functools.partial(_turns_ended, rds, keys, 1), TURN, what="the first turn's end")
    retry_until(
        lambda: "less than 5% of your 5h limit" in pane_text(codex_ib, "reader"), TURN, what="the warning"
    )
    sent = codex_ib.run("send", "reader", "more")
    assert sent.returncode == 0, sent.stderr
    retry_until(functools.partial(_turns_ended, rds, keys, 2), TURN, what="the second turn")
    assert openai.user_texts()[1:] == ["more"]
    assert "Keep current model" not in pane_text(codex_ib, "reader")
