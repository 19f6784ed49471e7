"""Escalation end to end: a fake agent's permission dialog, the real worker tracking it, the real bot
repeating it as a DM (fake Bot API) and then through a second channel apprise delivers to a webhook on
loopback, and silence from the moment `ib approve` answers it. Bad channel URLs cost one line each."""

from __future__ import annotations

from collections.abc import Callable

import redis

from bus.connection.embedded import free_port
from bus.inbox.attention import AttentionStore, Item
from bus.inbox.attention_rules import CHANNELS, DM
from bus.wire.keys import Keys
from tests.bot_process import USER, BotProcess, Worker
from tests.cli import IbRunner
from tests.fake_telegram import FakeTelegram
from tests.integration.test_bot import bot_messages, spawn, wait_agent_topic, wait_shown
from tests.json_inbox import JsonInbox
from tests.waiting import retry_until

TIMEOUT = 60.0
DM_AFTER, CHANNELS_AFTER, REPEAT = 1.0, 3.0, 2.0
STARTS = {DM: DM_AFTER, CHANNELS: CHANNELS_AFTER}


def _item(store: AttentionStore, agent: str) -> Item | None:
    return next((i for i in store.open_items() if i.agent == agent), None)


def _dms(fake: FakeTelegram, agent: str) -> list[str]:
    return [t for t in fake.direct_texts(USER) if f"{agent} has waited" in t]


def _silent_after_the_answer(
    agents_ib: IbRunner,
    item: Item,
    store: AttentionStore,
    rds: redis.Redis,
    keys: Keys,
    arrived: Callable[[str], bool],
) -> Item:
    """The answered item, once a question raised after its answer has come through (`arrived`): every
    round taken of it was due before the answer."""
    asked = agents_ib.run("ask", "--from", "canary", "Still there?")
    assert asked.returncode == 0, asked.stderr
    retry_until(lambda: arrived("canary"), TIMEOUT, what="the canary")
    answered = store.get(item.id)
    assert answered is not None and not answered.open
    for level, number, _target in _marks(rds, keys, item.id):
        assert item.raised_at + STARTS[level] + number * REPEAT <= answered.answered_at
    return answered


def _marks(rds: redis.Redis, keys: Keys, item_id: str) -> list[tuple[str, int, str]]:
    """(level, round, target) of every delivery made of one item."""
    marks = [str(m).split(":", 2) for m in rds.hkeys(keys.attention_sent(item_id))]
    return [(level, int(number), target) for level, number, target in marks]


def test_an_unanswered_permission_reaches_the_dm_then_the_second_channel_and_stops_when_answered(
    agents_ib: IbRunner,
    running_worker: Worker,
    bot: BotProcess,
    fake: FakeTelegram,
    rds: redis.Redis,
    keys: Keys,
) -> None:
    fake.start_private_chat(USER)  # the other allowed user (1234) never did: one line, the rest goes on
    nowhere = free_port()
    with JsonInbox() as inbox:
        bot.env.update(
            {
                "IB_ATTENTION_DM_AFTER": str(DM_AFTER),
                "IB_ATTENTION_CHANNELS_AFTER": str(CHANNELS_AFTER),
                "IB_ATTENTION_REPEAT": str(REPEAT),
                "IB_ATTENTION_CHANNELS": f"nonsense://x json://127.0.0.1:{nowhere}/, {inbox.url}",
            }
        )
        bot.start()
        store = AttentionStore(rds, keys)
        spawned = agents_ib.run(
            "new-agent", "Do it.\nfake: permission touch made.txt\nfake: done", "--name", "maker"
        )
        assert spawned.returncode == 0, spawned.stderr
        item = retry_until(lambda: _item(store, "maker"), TIMEOUT, what="the permission to be tracked")
        assert item.kind == "permission"
        listed = agents_ib.run("attention")
        assert "maker  permission" in listed.stdout and "ib approve maker" in listed.stdout

        retry_until(lambda: any("maker" in t for t in inbox.titles()), TIMEOUT, what="the second channel")
        assert any("maker has waited" in t for t in fake.direct_texts(USER)), "the DM comes first"
        # two people answer at once, while the escalation goes on: one answer lands, the other is told
        both = [agents_ib.popen("approve", "maker") for _ in range(2)]
        said = [p.communicate(timeout=TIMEOUT) for p in both]
        results = sorted((p.returncode, out, err) for p, (out, err) in zip(both, said, strict=True))
        assert [code for code, _out, _err in results] == [0, 1], results
        assert "already answered" in results[1][2]

        # Silence: another agent's question, raised after the answer, reaches the channel a full repeat
        # later than any round of the answered item could have: every tick in between found it closed.
        def on_the_channel(agent: str) -> bool:
            return any(agent in t for t in inbox.titles())

        answered = _silent_after_the_answer(agents_ib, item, store, rds, keys, on_the_channel)
        assert answered.answered_by.startswith(("approve by ib@", "state event")), answered.answered_by
        marks = _marks(rds, keys, item.id)
        assert {level for level, _n, _t in marks} == {DM, CHANNELS}
        channel_marks = [m for m in marks if m[0] == CHANNELS]
        assert len([t for t in inbox.titles() if "maker" in t]) == len(channel_marks)
        assert len([t for t in fake.direct_texts(USER) if "maker" in t]) == len(marks) - len(channel_marks)
        assert {target for _l, _n, target in channel_marks} == {"3"}  # the webhook, third in the setting
    log = bot.log.read_text()
    assert log.count("channel 1 (nonsense://…) is not a URL apprise can use") == 1
    assert log.count(f"channel 2 (json://127.0.0.1:{nowhere}/) is unreachable") == 1
    assert log.count("cannot message user 1234") == 1
    assert agents_ib.run("attention").stdout.count("maker") == 0


def test_a_tap_on_the_dialog_s_button_in_telegram_stops_the_dms(
    agents_ib: IbRunner,
    running_worker: Worker,
    bot: BotProcess,
    fake: FakeTelegram,
    rds: redis.Redis,
    keys: Keys,
) -> None:
    fake.start_private_chat(USER)
    bot.env.update({"IB_ATTENTION_DM_AFTER": str(DM_AFTER), "IB_ATTENTION_REPEAT": str(REPEAT)})
    bot.start()
    store = AttentionStore(rds, keys)
    spawn(agents_ib, "tapped", "fake: permission touch tapped.txt", "fake: done")
    topic = wait_agent_topic(fake, "tapped")
    wait_shown(fake, topic, "🔐 tapped asks to use Bash", timeout=TIMEOUT)
    item = retry_until(lambda: _item(store, "tapped"), TIMEOUT, what="the permission to be tracked")
    retry_until(lambda: len(_dms(fake, "tapped")) >= 2, TIMEOUT, what="the DM, repeated")
    dialog = next(m for m in bot_messages(fake, topic) if m.text.startswith("🔐 tapped asks"))
    fake.inject_callback(USER, dialog.message_id, dialog.buttons[0][0][1])  # Allow
    wait_shown(fake, topic, "✓ approved", timeout=TIMEOUT)
    answered = _silent_after_the_answer(agents_ib, item, store, rds, keys, lambda a: bool(_dms(fake, a)))
    assert answered.answered_by.startswith((f"approve by telegram:{USER}", "state event")), (
        answered.answered_by
    )
    assert len(_dms(fake, "tapped")) == len(_marks(rds, keys, item.id))
