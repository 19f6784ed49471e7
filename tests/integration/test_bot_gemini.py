"""A Gemini CLI agent's shell dialog answered from Telegram: the real Gemini CLI (pinned) started by
`ib new-agent --cli gemini` under bubblewrap, offline against the scripted Gemini API, its worker running,
the bot against the Bot API fake. Its BeforeTool / Notification hooks put the dialog in the agent's topic
with a button per answer; Allow presses the key Gemini CLI draws beside the option and the turn
completes; Deny presses its Esc-equivalent, the command never runs and the agent waits."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from bus.wire.keys import Keys
from tests.bot_process import USER, BotProcess, Worker, worker_running
from tests.cli import IbRunner
from tests.fake_gemini.script import reply, shell
from tests.fake_gemini.server import FakeGemini
from tests.fake_telegram import FakeMessage, FakeTelegram
from tests.integration.test_bot import bot_messages, everywhere, wait_agent_topic, wait_shown
from tests.reads import pane_text
from tests.streams import stream_entries
from tests.waiting import retry_until
from worker.markers import COMPLETION_MARKER

pytestmark = [pytest.mark.gemini, pytest.mark.timeout(300)]
TURN = 90.0  # deadline for one turn of a cold CLI on 2 busy cores, through the bot
DIALOG = "Allow execution of [Shell]?"


@pytest.fixture
def gemini_worker(gemini_ib: IbRunner, tmp_path: Path, rds: redis.Redis, keys: Keys) -> Iterator[Worker]:
    """`ib worker` for the real-CLI agents: the bot's taps reach them through it."""
    with worker_running(gemini_ib, tmp_path / "worker.log", rds, keys) as running:
        yield running


@pytest.fixture(autouse=True)
def _what_happened(fake: FakeTelegram, rds: redis.Redis, keys: Keys) -> Iterator[None]:
    """Printed for a failing test: what the topics show and the events behind them."""
    yield
    print("Telegram shows:\n" + everywhere(fake))
    for entry_id, fields in stream_entries(rds, keys.events):
        event = json.loads(fields["e"])
        print("event", entry_id, event["type"], event["msg"][:80], json.dumps(event["data"])[:300])


def _tap(fake: FakeTelegram, message: FakeMessage, label: str) -> None:
    data = next(d for row in message.buttons for text, d in row if text.removesuffix(" (default)") == label)
    fake.inject_callback(USER, message.message_id, data)


def _dialog_in_topic(
    ib: IbRunner, bot: BotProcess, fake: FakeTelegram, name: str, command: str
) -> tuple[int, FakeMessage]:
    """The agent started with the bot up, its dialog shown in its topic and drawn in its pane."""
    bot.start()
    spawned = ib.run("new-agent", "--cli", "gemini", "--name", name, "build it")
    assert spawned.returncode == 0, spawned.stderr
    topic = wait_agent_topic(fake, name, timeout=TURN)
    head = f"🔐 {name} asks to use"
    wait_shown(fake, topic, head, timeout=TURN)
    [dialog] = [m for m in bot_messages(fake, topic) if head in m.text]  # maybe merged after other lines
    assert command in dialog.text
    retry_until(lambda: DIALOG in pane_text(ib, name), TURN, 0.2, "the dialog drawn")
    return topic, dialog


def test_a_command_allowed_from_telegram_runs_and_the_turn_completes(
    gemini_ib: IbRunner,
    gemini: FakeGemini,
    gemini_worker: Worker,
    bot: BotProcess,
    fake: FakeTelegram,
    repo: Path,
) -> None:
    command = "touch built.txt && echo built"
    gemini.script(reply("Now the build.", shell(command)), reply(f"Built.\n{COMPLETION_MARKER}"))
    topic, dialog = _dialog_in_topic(gemini_ib, bot, fake, "builder", command)
    labels = [label.removesuffix(" (default)") for row in dialog.buttons for label, _data in row]
    assert labels[0] == "Allow" and "Deny" in labels, labels
    _tap(fake, dialog, "Allow")
    wait_shown(fake, topic, f"✓ approved a permission dialog ({DIALOG}) of builder", timeout=TURN)
    retry_until(
        (repo / ".ib" / "agents" / "builder" / "repo" / "built.txt").exists, TURN, 0.2, "the command ran"
    )
    wait_shown(fake, topic, "✓ builder completed", timeout=TURN)


def test_a_command_denied_from_telegram_does_not_run_and_the_agent_waits(
    gemini_ib: IbRunner,
    gemini: FakeGemini,
    gemini_worker: Worker,
    bot: BotProcess,
    fake: FakeTelegram,
    rds: redis.Redis,
    keys: Keys,
    repo: Path,
) -> None:
    command = "touch denied.txt"
    gemini.script(reply("Making it.", shell(command)), reply("Understood."))
    topic, dialog = _dialog_in_topic(gemini_ib, bot, fake, "nay", command)
    _tap(fake, dialog, "Deny")
    wait_shown(fake, topic, f"✓ denied a permission dialog ({DIALOG}) of nay", timeout=TURN)
    retry_until(lambda: rds.hget(keys.agent("nay"), "state") == "waiting", TURN, 0.2, "the agent waiting")
    assert "Request cancelled." in gemini_ib.run("look", "nay").stdout
    assert not (repo / ".ib" / "agents" / "nay" / "repo" / "denied.txt").exists()
