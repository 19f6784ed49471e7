"""A dialog shown before the bot restarts stays one message after it: told again (the hook's detail after
the pane watcher's telling), its message is edited; answered from its buttons, they go. An entry of the
dialogs' messages that is gone (expired) or does not read is no error: the dialog is told anew. A tap
naming another dialog than the one the agent shows is told so, and sends nothing."""

from __future__ import annotations

from pathlib import Path

import pytest
import redis

from bus.wire.keys import Keys
from tests.bot_process import USER, BotProcess, Worker
from tests.cli import IbRunner
from tests.fake_telegram import FakeMessage, FakeTelegram
from tests.integration.test_bot import bot_messages, emit, settled, spawn, wait_agent_topic, wait_shown
from tests.integration.test_bot_dialogs import DIALOG, TELLINGS, _tell
from tests.waiting import retry_until

PROMPT = "p-0a1b2c3d"
OTHER_DIALOG = "builder shows another dialog now, not that one; nothing was sent"
TOLD = "🔐 twice asks to use Bash\ntouch told.txt"  # both tellings in one message


def _dialogs(fake: FakeTelegram, topic: int) -> list[FakeMessage]:
    return [m for m in bot_messages(fake, topic) if m.text.startswith(DIALOG)]


def _shown_then_restarted(
    bot: BotProcess, fake: FakeTelegram, rds: redis.Redis, keys: Keys, order: str
) -> int:
    """The dialog's first telling shown, then the bot restarted; the topic."""
    bot.start()
    emit(rds, keys, "spawned", "twice started", agent="twice", sender="system")
    topic = wait_agent_topic(fake, "twice")
    first_type, first = TELLINGS[order][0]
    _tell(rds, keys, first, PROMPT, first_type)
    wait_shown(fake, topic, DIALOG)
    settled(rds, keys)
    bot.stop()
    bot.start()
    return topic


@pytest.mark.parametrize("order", list(TELLINGS))
def test_a_dialog_told_again_after_a_restart_edits_its_message(
    bot: BotProcess, fake: FakeTelegram, rds: redis.Redis, keys: Keys, order: str
) -> None:
    topic = _shown_then_restarted(bot, fake, rds, keys, order)
    entry = keys.dialog_message(topic, PROMPT)
    assert rds.ttl(entry) > 0  # remembered for a while, not for ever
    second_type, second = TELLINGS[order][1]
    _tell(rds, keys, second, PROMPT, second_type)
    wait_shown(fake, topic, TOLD)
    # the hook told first: its message reads TOLD already, and the pane's telling edits it (its drawn
    # options). Nothing pending does not mean the restarted bot read the event yet: wait for the edit
    retry_until(
        lambda: [m for m in _dialogs(fake, topic) if m.edits], 20, 0.05, "the dialog's message edited"
    )
    settled(rds, keys)
    [dialog] = _dialogs(fake, topic)
    assert dialog.text == TOLD
    assert dialog.edits  # the first telling, then both in its place
    assert [row[0][0] for row in dialog.buttons] == ["Yes (default)", "No"]  # the options as drawn stay


ENTRIES = {  # what became of the dialog's entry while the bot was down
    "expired": lambda rds, key: rds.delete(key),
    "unreadable": lambda rds, key: rds.hset(key, mapping={"message": "seventy", "event": "{not json"}),
    "not-a-hash": lambda rds, key: rds.set(key, "77"),
}


@pytest.mark.parametrize("entry", list(ENTRIES))
def test_a_dialog_whose_entry_is_gone_is_told_anew_and_the_bot_goes_on(
    bot: BotProcess, fake: FakeTelegram, rds: redis.Redis, keys: Keys, entry: str
) -> None:
    topic = _shown_then_restarted(bot, fake, rds, keys, "pane-then-hook")
    ENTRIES[entry](rds, keys.dialog_message(topic, PROMPT))
    second_type, second = TELLINGS["pane-then-hook"][1]
    _tell(rds, keys, second, PROMPT, second_type)
    retry_until(lambda: len(_dialogs(fake, topic)) == 2, 20, 0.05, "the dialog told anew")
    emit(rds, keys, "message", "said afterwards", agent="twice")
    wait_shown(fake, topic, "said afterwards")
    settled(rds, keys)
    assert bot.proc is not None and bot.proc.poll() is None


def test_a_dialog_shown_before_a_restart_is_answered_in_its_message(
    agents_ib: IbRunner, bot: BotProcess, fake: FakeTelegram, running_worker: Worker, repo: Path
) -> None:
    bot.start()
    spawn(agents_ib, "builder", "fake: permission touch allowed.txt", "fake: done")
    topic = wait_agent_topic(fake, "builder")
    wait_shown(fake, topic, "🔐 builder asks to use Bash", timeout=40)
    bot.stop()
    bot.start()
    [dialog] = [m for m in bot_messages(fake, topic) if m.text.startswith("🔐 builder asks")]
    allow = dialog.buttons[0][0][1]
    other = "p-deadbeef"  # a dialog id that is not the one builder shows
    assert other != "p-" + allow.rsplit(":", 1)[1]
    forged = fake.inject_callback(USER, dialog.message_id, f"y:builder:{other.removeprefix('p-')}")
    wait_shown(fake, topic, f"⚠ {OTHER_DIALOG}")
    assert next(a for a in fake.callback_answers if a.query_id == forged).text == OTHER_DIALOG
    refused = agents_ib.run("approve", "builder", "--prompt", other)
    assert (refused.returncode, refused.stderr.strip()) == (1, f"ib approve: error: {OTHER_DIALOG}")
    fake.inject_callback(USER, dialog.message_id, allow)  # the real one is still open, and answered
    made = repo / ".ib" / "agents" / "builder" / "repo" / "allowed.txt"
    retry_until(made.exists, 30, 0.1, "the allowed command ran")
    wait_shown(fake, topic, "✓ builder completed", timeout=40)
    retry_until(lambda: (fake.message(dialog.message_id) or dialog).buttons == [], 20, 0.05, "buttons gone")
    assert [m.message_id for m in bot_messages(fake, topic) if m.text.startswith("🔐 builder asks")] == [
        dialog.message_id
    ]
