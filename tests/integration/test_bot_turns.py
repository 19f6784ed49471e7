"""A turn in an agent's topic, with the bot reading the agent's output and its events apart: whichever is
read first, the live status line never outlives the turn and never shows beside what replaces it, and
the turn's last words come before its end. Output items and events are written here, in the order the
test needs."""

from __future__ import annotations

import datetime as dt

import redis

from bot.agent_status import APPROVAL
from bot.consumer import GROUP
from bus.keys import Keys
from tests.fake_telegram import FakeMessage, FakeTelegram
from tests.integration.test_bot import (
    BotProcess,
    bot,
    bot_messages,
    emit,
    fake,
    running_worker,
    wait_shown,
    wait_topic,
)
from tests.waiting import retry_until

__all__ = ["bot", "fake", "running_worker"]  # fixtures


def write(rds: redis.Redis, keys: Keys, agent: str, kind: str, ago: float, text: str = "") -> None:
    """An output item of `agent`, written by its transcript `ago` seconds before now."""
    at = dt.datetime.now(dt.UTC) - dt.timedelta(seconds=ago)
    rds.xadd(keys.output(agent), {"kind": kind, "text": text, "tool": "", "ts": at.isoformat()})


def status_lines(fake: FakeTelegram, thread: int) -> list[FakeMessage]:
    return [m for m in bot_messages(fake, thread) if m.text.startswith("⚙") or m.text == APPROVAL]


def agent_topic(rds: redis.Redis, keys: Keys, fake: FakeTelegram, agent: str) -> int:
    emit(rds, keys, "spawned", f"{agent} started", agent=agent, sender="system")
    return wait_topic(fake, agent)


def test_a_turn_end_read_before_the_turn_start_leaves_no_status_line(
    bot: BotProcess, fake: FakeTelegram, rds: redis.Redis, keys: Keys
) -> None:
    bot.start()
    quick, busy = agent_topic(rds, keys, fake, "quick"), agent_topic(rds, keys, fake, "busy")
    retry_until(
        lambda: rds.xpending(keys.events, GROUP)["pending"] == 0, 20, 0.05, "the topics' events shown"
    )
    emit(rds, keys, "waiting", "quick waits", agent="quick", data={"last_message": "All done here."})
    retry_until(lambda: rds.xpending(keys.events, GROUP)["pending"] == 1, 20, 0.05, "the end read, held")
    # the turn began five minutes ago: had it started now, its line would show at once
    write(rds, keys, "quick", "prompt", 300)
    write(rds, keys, "quick", "tool_use", 299, "**Bash**(make)")
    write(rds, keys, "quick", "text", 2, "All done here.")
    wait_shown(fake, quick, "⏳ quick is waiting")
    texts = [m.text for m in bot_messages(fake, quick)]
    assert texts[-2:] == ["Bash(make)\nAll done here.", "⏳ quick is waiting: quick waits"]  # words first

    # Another agent at work now: its line comes after any line the first agent got.
    write(rds, keys, "busy", "prompt", 300)
    write(rds, keys, "busy", "tool_use", 1, "**Grep**(def main)")
    (line,) = retry_until(lambda: status_lines(fake, busy), 20, 0.05, "busy's status line")
    ever = [fake.message(i) for i in range(1, line.message_id)]
    assert [m.text for m in ever if m is not None and m.thread_id == quick and m.text.startswith("⚙")] == []


def test_a_turn_end_read_after_the_output_removes_the_line_before_it_shows(
    bot: BotProcess, fake: FakeTelegram, rds: redis.Redis, keys: Keys
) -> None:
    bot.start()
    topic = agent_topic(rds, keys, fake, "steady")
    write(rds, keys, "steady", "prompt", 300)
    write(rds, keys, "steady", "tool_use", 1, "**Bash**(pytest -q)")
    (line,) = retry_until(lambda: status_lines(fake, topic), 20, 0.05, "the status line")
    assert line.text.startswith("⚙ Bash pytest -q · ")
    write(rds, keys, "steady", "text", 0, "The tests pass.")
    wait_shown(fake, topic, "The tests pass.")
    emit(rds, keys, "complete", "steady is done", agent="steady", data={"last_message": "The tests pass."})
    wait_shown(fake, topic, "✓ steady completed")
    assert status_lines(fake, topic) == []  # gone before the end showed, not after
    texts = [m.text for m in bot_messages(fake, topic)]
    assert texts[-2:] == ["Bash(pytest -q)\nThe tests pass.", "✓ steady completed: steady is done"]
    # Another agent works on: once its line was refreshed, the first one's would have been too.
    other = agent_topic(rds, keys, fake, "other")
    write(rds, keys, "other", "prompt", 300)
    write(rds, keys, "other", "tool_use", 1, "**Read**(a.py)")
    (working,) = retry_until(lambda: status_lines(fake, other), 20, 0.05, "the other agent's line")
    retry_until(lambda: (fake.message(working.message_id) or working).edits, 20, 0.05, "a refresh")
    assert status_lines(fake, topic) == []


def test_a_dialog_says_waiting_for_your_approval(
    bot: BotProcess, fake: FakeTelegram, rds: redis.Redis, keys: Keys
) -> None:
    bot.start()
    topic = agent_topic(rds, keys, fake, "careful")
    write(rds, keys, "careful", "prompt", 300)
    write(rds, keys, "careful", "tool_use", 290, "**Bash**(rm -rf build)")
    retry_until(lambda: status_lines(fake, topic), 20, 0.05, "the status line")
    emit(
        rds, keys, "permission", "careful asks", agent="careful", data={"kind": "permission", "tool": "Bash"}
    )
    retry_until(lambda: [m.text for m in status_lines(fake, topic)] == [APPROVAL], 20, 0.05, "the approval")
    assert [m.text for m in bot_messages(fake, topic)][-2:] == ["🔐 careful asks to use Bash", APPROVAL]
