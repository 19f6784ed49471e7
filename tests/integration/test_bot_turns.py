"""A turn in an agent's topic, with the bot reading the agent's output and its events apart: whichever is
read first, the live status line never outlives the turn and never shows beside what replaces it, and
the turn's last words come before its end. Output items and events are written here, in the order the
test needs."""

from __future__ import annotations

import datetime as dt
import os
import re

import redis

from bot.feeds.agent_status import APPROVAL
from bot.feeds.consumer import GROUP
from bus.events.activity import TURN_END
from bus.stores.hashes import read_hash
from bus.wire.keys import Keys
from tests.bot_process import USER, BotProcess, Worker
from tests.cli import IbRunner
from tests.fake_telegram import FakeMessage, FakeTelegram
from tests.integration.test_bot import bot_messages, emit, spawn, wait_agent_topic, wait_shown, wait_topic
from tests.streams import newest_entry
from tests.waiting import retry_until


def write(rds: redis.Redis, keys: Keys, agent: str, kind: str, ago: float, text: str = "") -> None:
    """An output item of `agent`, written by its transcript `ago` seconds before now."""
    at = dt.datetime.now(dt.UTC) - dt.timedelta(seconds=ago)
    rds.xadd(keys.output(agent), {"kind": kind, "text": text, "tool": "", "ts": at.isoformat()})


def output_read(rds: redis.Redis, keys: Keys, agent: str) -> bool:
    """Whether the bot has shown (or passed over) every output item the agent's transcript holds."""
    record = read_hash(rds, keys.agent(agent))
    path = record.get("transcript_path", "")
    if not path or int(record.get("transcript_offset") or 0) < os.path.getsize(path):
        return False
    last = newest_entry(rds, keys.output(agent))
    return last is not None and rds.hget(keys.topics("output"), agent) == last[0]


STATE_LINE = re.compile(r"^\S+: \S+ → \S+$")  # a `state` event's line: `talker: running → waiting`


def said_once_above_its_end(texts: list[str], words: str, end: str) -> int:
    """Where the one message with `words` is; the next message after it, state lines aside, is `end`. A
    state line may come between: the agent's state changed (an event before the end) after the tail had
    already shown the words it read from the transcript in the middle of the turn."""
    holding = [i for i, text in enumerate(texts) if words in text]
    assert len(holding) == 1, texts
    after = [text for text in texts[holding[0] + 1 :] if not STATE_LINE.match(text)]
    assert after and end in after[0], texts
    return holding[0]


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
    # one transaction, as the worker's tailer writes what one read of the transcript holds: written apart,
    # the bot may read the prompt alone and rightly show "thinking" first
    turn = rds.pipeline()
    write(turn, keys, "steady", "prompt", 300)
    write(turn, keys, "steady", "tool_use", 1, "**Bash**(pytest -q)")
    turn.execute()
    (line,) = retry_until(lambda: status_lines(fake, topic), 20, 0.05, "the status line")
    assert line.text.startswith("⚙ Bash pytest -q · ")
    write(rds, keys, "steady", "text", 0, "The tests pass.")
    wait_shown(fake, topic, "The tests pass.")
    emit(rds, keys, "complete", "steady is done", agent="steady", data={"last_message": "The tests pass."})
    wait_shown(fake, topic, "✓ steady completed")
    assert status_lines(fake, topic) == []  # gone before the end showed, not after
    texts = [m.text for m in bot_messages(fake, topic)]
    # the output is one message, or two when the first was still on its way as the second came (busy cores)
    assert texts[-1] == "✓ steady completed: steady is done"
    assert "\n".join(texts[:-1]).endswith("Bash(pytest -q)\nThe tests pass.")
    # Another agent works on: once its line was refreshed, the first one's would have been too.
    other = agent_topic(rds, keys, fake, "other")
    write(rds, keys, "other", "prompt", 300)
    write(rds, keys, "other", "tool_use", 1, "**Read**(a.py)")
    retry_until(lambda: status_lines(fake, other), 20, 0.05, "the other agent's line")
    # the line the topic shows now: read apart (busy cores), the prompt got a line that the tool call's
    # output then moved below it (deleted and sent again), so the first line seen may be gone
    retry_until(lambda: [line for line in status_lines(fake, other) if line.edits], 20, 0.05, "a refresh")
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


def test_the_hooks_copy_of_the_last_words_goes_when_the_tail_went_through_the_turn_without_them(
    bot: BotProcess, fake: FakeTelegram, rds: redis.Redis, keys: Keys
) -> None:
    bot.start()
    topic = agent_topic(rds, keys, fake, "swift")
    write(rds, keys, "swift", "prompt", 3)
    write(rds, keys, "swift", "tool_use", 2, "**Bash**(make)")
    wait_shown(fake, topic, "Bash(make)")
    retry_until(lambda: rds.xpending(keys.events, GROUP)["pending"] == 0, 20, 0.05, "the spawn shown")
    said = {"last_message": "Built.\n\nShip it?"}
    end = emit(rds, keys, "waiting", "swift waits", agent="swift", data=said)
    retry_until(lambda: rds.xpending(keys.events, GROUP)["pending"] == 1, 20, 0.05, "the end read, held")
    # the worker read the transcript at once on the end: the words were not in it yet
    rds.xadd(keys.output("swift"), {"kind": TURN_END, "text": "", "tool": "", "ts": "", "event": end})
    wait_shown(fake, topic, "⏳ swift is waiting")
    write(rds, keys, "swift", "text", 1, "Built.")  # the transcript's copy, in two text blocks, a tick later
    write(rds, keys, "swift", "text", 1, "Ship it?")
    write(rds, keys, "swift", "prompt", -2)  # the next turn
    write(rds, keys, "swift", "text", -3, "Shipped.")
    wait_shown(fake, topic, "Shipped.")
    texts = [m.text for m in bot_messages(fake, topic)]
    assert texts[-2:] == ["⏳ swift is waiting: swift waits", "Shipped."]
    assert "\n".join(texts[:-2]).endswith("Bash(make)\nBuilt.\n\nShip it?")  # one message or two (busy cores)
    assert sum(text.count("Ship it?") for text in texts) == 1  # the hook's copy went


def test_a_fake_agents_last_words_show_once_above_each_turns_end(
    agents_ib: IbRunner,
    bot: BotProcess,
    fake: FakeTelegram,
    rds: redis.Redis,
    keys: Keys,
    running_worker: Worker,
) -> None:
    """The worker tails the agent's transcript while the bot reads its hooks' events: whichever is read
    first, each turn's last words are in the topic once, above the turn's end."""
    bot.start()
    spawn(agents_ib, "talker", "fake: run true", "fake: reply Postgres or SQLite?")
    topic = wait_agent_topic(fake, "talker")
    end = "⏳ talker is waiting"
    wait_shown(fake, topic, end, timeout=40)
    fake.inject_message(USER, "fake: reply SQLite it is, then?", thread_id=topic)
    retry_until(lambda: [end in m.text for m in bot_messages(fake, topic)].count(True) == 2, 40, 0.05)
    retry_until(lambda: output_read(rds, keys, "talker"), 30, 0.05, "the transcript's copy read")
    texts = [m.text for m in bot_messages(fake, topic) if not m.text.startswith("→ talker spawned")]
    first = said_once_above_its_end(texts, "Postgres or SQLite?", end)
    assert said_once_above_its_end(texts, "SQLite it is, then?", end) > first


def test_agents_met_late_get_their_spawn_above_their_output(
    bot: BotProcess, fake: FakeTelegram, rds: redis.Redis, keys: Keys
) -> None:
    """The bot was down while agents spawned and worked: each topic opens with the spawn, the output below
    it. The output feed reads an agent's stream once its topic is bound, while the same read of events
    still makes the next agents' topics before any spawn is queued."""
    rds.xgroup_create(keys.events, GROUP, id="$", mkstream=True)  # as the bot's earlier run left it
    agents = [f"late-{n}" for n in range(3)]
    for agent in agents:
        emit(rds, keys, "spawned", f"{agent} started", agent=agent, sender="system")
        write(rds, keys, agent, "prompt", 2)
        write(rds, keys, agent, "text", 1, f"{agent} is on it.")
    bot.start()
    for agent in agents:
        topic = wait_topic(fake, agent)
        wait_shown(fake, topic, f"{agent} is on it.")
        texts = [m.text for m in bot_messages(fake, topic)]
        assert texts[0].startswith(f"→ {agent} spawned"), texts
