"""A Codex CLI agent's approval dialog answered from Telegram: the real Codex CLI (pinned) started by
`ib new-agent --cli codex`, offline against the scripted Responses API, its worker running, the bot
against the Bot API fake. Its PermissionRequest hook puts the dialog in the agent's topic with a button
per answer; a tap presses the key Codex draws beside the option, and the turn completes."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from bus.wire.keys import Keys
from tests.bot_process import USER, BotProcess, Worker
from tests.cli import IbRunner
from tests.fake_openai import FakeOpenAI, exec_command, reply
from tests.fake_telegram import FakeMessage, FakeTelegram
from tests.integration.test_bot import bot_messages, everywhere, wait_agent_topic, wait_shown
from tests.reads import pane_text
from tests.streams import stream_entries
from tests.waiting import retry_until
from worker.markers import COMPLETION_MARKER

pytestmark = [pytest.mark.codex, pytest.mark.timeout(300)]  # several turns of a cold CLI, each up to TURN
TURN = 90.0  # deadline for one turn of a cold CLI on 2 busy cores, through the bot
ASKING = "touch built.txt && echo built"
DIALOG = "Would you like to run the following command?"


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


def test_a_command_allowed_from_telegram_runs_and_the_turn_completes(
    codex_ib: IbRunner,
    openai: FakeOpenAI,
    codex_worker: Worker,
    bot: BotProcess,
    fake: FakeTelegram,
    repo: Path,
) -> None:
    call = exec_command(ASKING, escalate="The build writes outside the sandbox")
    openai.script(reply("Now the build.", call), reply(f"Built.\n\n{COMPLETION_MARKER}"))
    bot.start()
    spawned = codex_ib.run("new-agent", "--cli", "codex", "--name", "builder", "build it")
    assert spawned.returncode == 0, spawned.stderr
    topic = wait_agent_topic(fake, "builder", timeout=TURN)
    head = "🔐 builder asks to use Bash"
    wait_shown(fake, topic, head, timeout=TURN)
    [dialog] = [m for m in bot_messages(fake, topic) if head in m.text]  # maybe merged after other lines
    assert ASKING in dialog.text
    assert [label for row in dialog.buttons for label, _data in row] == ["Allow", "Always allow", "Deny"]
    retry_until(lambda: DIALOG in pane_text(codex_ib, "builder"), TURN, 0.2, "the dialog drawn")
    _tap(fake, dialog, "Allow")
    wait_shown(
        fake, topic, f"✓ approved a permission dialog ({DIALOG}) of builder: Yes, proceed", timeout=TURN
    )
    retry_until(
        (repo / ".ib" / "agents" / "builder" / "repo" / "built.txt").exists, TURN, 0.2, "the command ran"
    )
    wait_shown(fake, topic, "✓ builder completed", timeout=TURN)
