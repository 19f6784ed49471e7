"""`ib attention` and /attention: what waits on a person, oldest first, with how long and how to answer;
an answered item leaves both lists. Bad settings of the escalation are one line each."""

from __future__ import annotations

import json

import redis

from bus.events.event_model import Event
from bus.inbox.attention import AttentionStore
from bus.wire.keys import Keys
from tests.bot_process import USER, BotProcess
from tests.cli import IbRunner
from tests.fake_telegram import FakeTelegram
from tests.integration.test_bot import emit, wait_shown
from tests.streams import stream_entries


def _raise(rds: redis.Redis, keys: Keys, type_: str, agent: str, msg: str) -> None:
    """An event as an agent's hook publishes it, read by the store as the worker reads it."""
    event_id = emit(rds, keys, type_, msg, sender=agent, agent=agent)
    [(entry_id, fields)] = stream_entries(rds, keys.events, event_id, event_id)
    AttentionStore(rds, keys).on_event(Event.from_entry(entry_id, fields["e"]))


def test_the_lists_oldest_first_until_answered(
    ib: IbRunner, bot: BotProcess, fake: FakeTelegram, rds: redis.Redis, keys: Keys
) -> None:
    assert ib.run("attention").stdout == "nothing waits on you\n"
    _raise(rds, keys, "permission", "painter", "painter asks to use Bash: make paint")
    _raise(rds, keys, "question", "scribe", "Agent scribe asks: tabs or spaces?")
    lines = ib.run("attention").stdout.splitlines()
    assert len(lines) == 2
    assert "painter  permission: painter asks to use Bash: make paint  (ib approve painter" in lines[0]
    assert "scribe  question: Agent scribe asks: tabs or spaces?  (ib questions" in lines[1]
    rows = json.loads(ib.run("attention", "--json").stdout)
    assert [(r["agent"], r["kind"], r["answered_at"]) for r in rows] == [
        ("painter", "permission", 0.0),
        ("scribe", "question", 0.0),
    ]
    assert all(r["waited"] >= 0 for r in rows)

    bot.start()
    fake.inject_message(USER, "/attention")
    wait_shown(fake, None, "2 waiting on you, oldest first:", "painter  permission", "scribe  question")
    AttentionStore(rds, keys).answer("painter", "ib approve")
    assert [line.split()[1] for line in ib.run("attention").stdout.splitlines()] == ["scribe"]
    AttentionStore(rds, keys).answer("scribe", "ib answer")
    fake.inject_message(USER, "/attention")
    wait_shown(fake, None, "Nothing waits on you.")


def test_bad_escalation_settings_are_one_line(ib: IbRunner) -> None:
    for name, value in (
        ("IB_ATTENTION_DM_AFTER", "-5"),
        ("IB_ATTENTION_CHANNELS_AFTER", "soon"),
        ("IB_ATTENTION_REPEAT", "inf"),
    ):
        done = ib.run("attention", env={name: value})
        assert done.returncode != 0
        assert done.stderr.count("\n") == 1 and name in done.stderr, done.stderr
        assert "Traceback" not in done.stderr
