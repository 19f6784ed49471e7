"""Dialogs of the real Claude Code CLI (pinned) answered from Telegram: a new agent in the configuration a
user gets (no --permission-mode), offline against the scripted Messages API, its worker running, the bot
against the Bot API fake. The same scenarios as tests/integration/test_claude_dialogs.py, answered by a
tap or a reply in the agent's topic instead of `ib approve` / `ib deny` / `ib answer`."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from bus.wire.keys import Keys
from tests.bot_process import USER, BotProcess, Worker, worker_running
from tests.cli import IbRunner
from tests.fake_anthropic import FakeAnthropic, ask_user_question, bash, reply
from tests.fake_telegram import FakeMessage, FakeTelegram
from tests.integration.test_bot import bot_messages, everywhere, wait_agent_topic, wait_shown
from tests.reads import pane_text
from tests.streams import stream_entries
from tests.waiting import retry_until

pytestmark = pytest.mark.claude
TURN = 90.0  # deadline for one turn of a cold CLI on 2 busy cores, through the bot
ASKING = 'touch built.txt; echo "exit=$?"'  # `$?` cannot be checked before it runs: Claude Code asks


@pytest.fixture
def claude_worker(claude_ib: IbRunner, tmp_path: Path, rds: redis.Redis, keys: Keys) -> Iterator[Worker]:
    """`ib worker` for the real-CLI agents: the bot's taps and replies reach them through it."""
    with worker_running(claude_ib, tmp_path / "worker.log", rds, keys) as running:
        yield running


@pytest.fixture(autouse=True)
def _what_happened(fake: FakeTelegram, rds: redis.Redis, keys: Keys) -> Iterator[None]:
    """Printed for a failing test: what the topics show and the events behind them."""
    yield
    print("Telegram shows:\n" + everywhere(fake))
    for entry_id, fields in stream_entries(rds, keys.events):
        event = json.loads(fields["e"])
        print("event", entry_id, event["type"], event["msg"][:80], json.dumps(event["data"])[:300])


def _start(ib: IbRunner, bot: BotProcess, fake: FakeTelegram, name: str, goal: str) -> int:
    bot.start()
    spawned = ib.run("new-agent", goal, "--name", name)
    assert spawned.returncode == 0, spawned.stderr
    return wait_agent_topic(fake, name, timeout=TURN)


def _shown_once(fake: FakeTelegram, topic: int, head: str) -> FakeMessage:
    wait_shown(fake, topic, head, timeout=TURN)
    found = [m for m in bot_messages(fake, topic) if head in m.text]  # the bot may merge it after other lines
    assert len(found) == 1, [m.text for m in found]
    return found[0]


def _screen(ib: IbRunner, agent: str) -> str:
    return pane_text(ib, agent, 60)


KNOWN = ["Allow", "Always allow", "Deny"]  # a permission dialog a hook told before the pane watcher read it


def _labels(message: FakeMessage) -> list[str]:
    return [label for row in message.buttons for label, _data in row]


def _buttons(message: FakeMessage) -> list[str]:
    """Each button's callback data, in order (the known labels share a row; drawn options get one each)."""
    return [data for row in message.buttons for _label, data in row]


def _tap(fake: FakeTelegram, message: FakeMessage, label: str) -> None:
    data = next(d for row in message.buttons for text, d in row if text.removesuffix(" (default)") == label)
    fake.inject_callback(USER, message.message_id, data)


def _wait_dialog(ib: IbRunner, agent: str, text: str) -> None:
    retry_until(lambda: text in _screen(ib, agent), TURN, 0.2, f"{text!r} on {agent}'s screen")


def test_a_command_allowed_from_telegram_runs_and_the_turn_completes(
    claude_ib: IbRunner,
    anthropic: FakeAnthropic,
    claude_worker: Worker,
    bot: BotProcess,
    fake: FakeTelegram,
    repo: Path,
) -> None:
    anthropic.script(
        reply("Now the build.", bash(ASKING, "Build it")),
        reply("Built.\n\nI HAVE COMPLETED THE GOAL"),
    )
    topic = _start(claude_ib, bot, fake, "builder", "build it")
    dialog = _shown_once(fake, topic, "🔐 builder asks to use Bash")
    assert ASKING in dialog.text
    _wait_dialog(claude_ib, "builder", "Do you want to proceed?")
    screen = _screen(claude_ib, "builder")
    drawn = [line for line in screen.splitlines() if line.strip().lstrip("❯ ")[:3] in ("1. ", "2. ", "3. ")]
    labels = _labels(dialog)
    assert len(drawn) == len(labels), screen  # a button per option the dialog draws
    told_by_the_hook = labels == KNOWN
    if not told_by_the_hook:  # the pane watcher read it first; its options as drawn stay after the hook
        texts = [line.strip().lstrip("❯ ")[3:].strip() for line in drawn]
        shown_as = [label.removesuffix(" (default)").rstrip("…") for label in labels]
        assert all(t.startswith(b) for t, b in zip(texts, shown_as, strict=True)), (labels, screen)

    fake.inject_callback(USER, dialog.message_id, _buttons(dialog)[0])  # Allow, or the drawn "Yes"
    if told_by_the_hook:
        approved = "✓ approved a permission dialog (Do you want to proceed?) of builder: Yes"
        wait_shown(fake, topic, approved, timeout=TURN)
    retry_until(
        (repo / ".ib" / "agents" / "builder" / "repo" / "built.txt").exists, TURN, 0.2, "the command ran"
    )
    wait_shown(fake, topic, "✓ builder completed", timeout=TURN)
    results = [r for request in anthropic.turns_taken() for r in request.tool_results()]
    assert "exit=0" in str(results[-1]["content"]) and not results[-1].get("is_error")


def test_a_command_denied_from_telegram_is_refused_and_the_turn_goes_on(
    claude_ib: IbRunner,
    anthropic: FakeAnthropic,
    claude_worker: Worker,
    bot: BotProcess,
    fake: FakeTelegram,
    repo: Path,
) -> None:
    anthropic.script(
        reply("Now the build.", bash(ASKING, "Build it")),
        reply("Understood, I use the fixtures.\n\nI HAVE COMPLETED THE GOAL"),
    )
    topic = _start(claude_ib, bot, fake, "refused", "build it")
    dialog = _shown_once(fake, topic, "🔐 refused asks to use Bash")
    _wait_dialog(claude_ib, "refused", "Do you want to proceed?")
    fake.inject_callback(USER, dialog.message_id, _buttons(dialog)[-1])  # Deny, or the drawn "No"
    if _labels(dialog) == KNOWN:  # the hook told it first (else the pane watcher, with the options drawn)
        denied = "✓ denied a permission dialog (Do you want to proceed?) of refused: No"
        wait_shown(fake, topic, denied, timeout=TURN)
    wait_shown(fake, topic, "⏳ refused is waiting", timeout=TURN)  # the refusal ended the turn: it waits
    fake.inject_message(USER, "use the fixtures instead", thread_id=topic)
    wait_shown(fake, topic, "✓ refused completed", timeout=TURN)
    assert not (repo / ".ib" / "agents" / "refused" / "repo" / "built.txt").exists()
    said = anthropic.user_texts()[-1].splitlines()
    assert (said[0], said[-1]) == ("[Request interrupted by user for tool use]", "use the fixtures instead")


@pytest.mark.parametrize("how", ["button", "reply"])
def test_a_question_of_the_agent_answered_from_telegram(
    claude_ib: IbRunner,
    anthropic: FakeAnthropic,
    claude_worker: Worker,
    bot: BotProcess,
    fake: FakeTelegram,
    how: str,
) -> None:
    anthropic.script(
        reply("A question first.", ask_user_question("Which database should I use?", ["Postgres", "SQLite"])),
        reply("SQLite it is.\n\nI HAVE COMPLETED THE GOAL"),
    )
    topic = _start(claude_ib, bot, fake, "chooser", "pick a database")
    asked = _shown_once(fake, topic, "❓ chooser asks: Which database should I use?")
    # Told by the hook (the tool's options) or, when Claude Code drew it first, by the pane watcher (the
    # options as drawn: Postgres (default), SQLite, Type something., Chat about this)
    assert [label.removesuffix(" (default)") for label in _labels(asked)][:2] == ["Postgres", "SQLite"]
    _wait_dialog(claude_ib, "chooser", "Which database should I use?")
    if how == "button":
        _tap(fake, asked, "SQLite")
    else:
        fake.inject_message(USER, "SQLite", thread_id=topic, reply_to=asked.message_id)
    wait_shown(fake, topic, "✓ chooser completed", timeout=TURN)
    results = [r for request in anthropic.turns_taken() for r in request.tool_results()]
    assert '"Which database should I use?"="SQLite"' in str(results[-1]["content"])
    retry_until(lambda: (fake.message(asked.message_id) or asked).buttons == [], TURN, 0.2, "buttons gone")
