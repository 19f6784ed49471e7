"""Dialogs answered from Telegram with a real worker and fake agents: a button per option as the dialog
draws them, and a tap that lands before Claude Code has drawn the dialog its hook told of."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
import redis

from bus.events.event_options import listed
from bus.wire.keys import Keys
from tests.bot_process import USER, BotProcess, Worker
from tests.cli import IbRunner
from tests.fake_telegram import FakeTelegram
from tests.integration.test_bot import (
    bot_messages,
    emit,
    received,
    settled,
    shown,
    spawn,
    wait_agent_topic,
    wait_shown,
)
from tests.reads import pane_text
from tests.waiting import retry_until
from worker.programs.hook_outcome import PERMISSION_OPTIONS


def test_a_dialog_with_drawn_options_is_answered_by_its_button(
    agents_ib: IbRunner,
    bot: BotProcess,
    fake: FakeTelegram,
    running_worker: Worker,
    tmp_path: Path,
    rds: redis.Redis,
    keys: Keys,
) -> None:
    bot.start()
    spawn(agents_ib, "picker", "fake: choose Which colour? | Red | Green | Blue", "fake: wait")
    topic = wait_agent_topic(fake, "picker")
    wait_shown(fake, topic, "❓ picker asks: Which colour?", timeout=40)
    asked = next(m for m in bot_messages(fake, topic) if "❓ picker asks" in m.text)
    question = asked.buttons[0][0][1].split(":")[1]
    # The dialog as the pane watcher reads it: its options as drawn, the default selected.
    options: list[dict[str, Any]] = [
        {"number": n, "label": c} for n, c in ((1, "Red"), (2, "Green"), (3, "Blue"))
    ]
    data = {
        "kind": "ask",
        "question": "Which colour?",
        "options": options,
        "default": 0,
        "question_id": question,
    }
    emit(rds, keys, "question", "Agent picker asks: Which colour?", agent="picker", data=data)
    retry_until(
        lambda: len([m for m in bot_messages(fake, topic) if "❓ picker asks" in m.text]) == 2, 20, 0.05
    )
    drawn = [m for m in bot_messages(fake, topic) if "❓ picker asks" in m.text][-1]
    assert [row[0][0] for row in drawn.buttons] == ["Red (default)", "Green", "Blue"]
    tapped = fake.inject_callback(USER, drawn.message_id, drawn.buttons[1][0][1])
    wait_shown(fake, topic, "You chose Green.", timeout=40)
    popup = next(a for a in fake.callback_answers if a.query_id == tapped)
    assert popup.text == "Answer: Green"  # the option as drawn, not its number
    retry_until(lambda: (fake.message(drawn.message_id) or drawn).buttons == [], 20, 0.05, "buttons gone")
    again = fake.inject_callback(USER, drawn.message_id, drawn.buttons[2][0][1])  # a second tap
    retry_until(lambda: any(a.query_id == again for a in fake.callback_answers), 20, 0.05, "the answer")
    said = next(a for a in fake.callback_answers if a.query_id == again)
    assert "already answered" in (said.text or "")
    assert "Blue" not in received(tmp_path)


def test_a_deny_tapped_before_the_dialog_is_drawn_waits_for_it(
    agents_ib: IbRunner,
    bot: BotProcess,
    fake: FakeTelegram,
    running_worker: Worker,
    repo: Path,
    rds: redis.Redis,
    keys: Keys,
) -> None:
    """Claude Code runs the PermissionRequest hook (which tells the bot) before it draws the dialog; a
    tap that lands in between must not take the dialog for closed (and refuse every later tap)."""
    bot.start()
    spawn(agents_ib, "hasty", "fake: wait")
    topic = wait_agent_topic(fake, "hasty")
    wait_shown(fake, topic, "⏳ hasty is waiting", timeout=40)
    payload = {
        "hook_event_name": "PermissionRequest",
        "tool_name": "Bash",
        "tool_input": {"command": "touch no.txt"},
    }
    told = agents_ib.run("hook", "event", stdin=json.dumps(payload), env={"IB_AGENT_ID": "hasty"})
    assert told.returncode == 0, told.stderr
    wait_shown(fake, topic, "🔐 hasty asks to use Bash")
    dialog = next(m for m in bot_messages(fake, topic) if m.text.startswith("🔐 hasty asks"))
    commands = keys.commands(agents_ib.env["IB_WORKER_ID"])
    sent = rds.xlen(commands)
    fake.inject_callback(USER, dialog.message_id, dialog.buttons[0][2][1])  # Deny, before the dialog shows
    retry_until(lambda: rds.xlen(commands) > sent, 20, 0.02, "the deny on its way to the worker")
    session = str(rds.hget(keys.agent("hasty"), "session"))
    # Now Claude Code draws it (the fake agent runs the same hook again, then draws).
    tmux = ["tmux", "-L", agents_ib.env["IB_TMUX_SOCKET"], "send-keys", "-t", session]
    subprocess.run([*tmux, "-l", "fake: permission touch no.txt"], check=True)
    subprocess.run([*tmux, "Enter"], check=True)
    wait_shown(fake, topic, "✓ denied a permission dialog", timeout=40)
    retry_until(lambda: "Do you want to proceed?" not in pane_text(agents_ib, "hasty"), 30, 0.2)
    assert not (repo / ".ib" / "agents" / "hasty" / "repo" / "no.txt").exists()


PANE_DIALOG: dict[str, Any] = {  # the dialog as the pane watcher reads it (worker.service.dialog_events)
    "kind": "permission",
    "title": "Do you want to proceed?",
    "options": [{"number": 1, "label": "Yes"}, {"number": 2, "label": "No"}],
    "default": 0,
    "question_id": "q-5f3c2a1b",
}
HOOK_DIALOG: dict[
    str, Any
] = {  # the hook's telling (worker.programs.claude.signals): options by meaning, not drawn
    "kind": "permission",
    "tool": "Bash",
    "detail": "touch told.txt",
    "options": listed(PERMISSION_OPTIONS),
}


DIALOG = "🔐 twice asks"  # a dialog's message, not the topic's status line ("🔐 waiting for your approval")


def _tell(rds: redis.Redis, keys: Keys, data: dict[str, Any], prompt: str, type_: str = "permission") -> None:
    emit(rds, keys, type_, "twice asks", agent="twice", data=data | {"prompt_id": prompt})


TELLINGS = {  # a dialog the pane watcher saw first: its event and the hook's detail, in the stream's order
    "pane-then-hook": (("permission", PANE_DIALOG), ("dialog_detail", HOOK_DIALOG)),
    "hook-then-pane": (("dialog_detail", HOOK_DIALOG), ("permission", PANE_DIALOG)),  # the record's race
    "pane-then-older-hook": (("permission", PANE_DIALOG), ("permission", HOOK_DIALOG)),  # an older ittybus
}


def _dialogs_told_twice(
    bot: BotProcess, fake: FakeTelegram, rds: redis.Redis, keys: Keys, order: str, together: bool
) -> None:
    """The pane watcher saw the dialog before the hook told it: two events with one prompt id."""
    bot.start()
    emit(rds, keys, "spawned", "twice started", agent="twice", sender="system")
    topic = wait_agent_topic(fake, "twice")
    emit(
        rds, keys, "message", "said just before", agent="twice"
    )  # queued with the dialog: kept when it is edited
    (first_type, first), (second_type, second) = TELLINGS[order]
    _tell(rds, keys, first, "p-0a1b2c3d", first_type)
    if not together:
        wait_shown(fake, topic, "🔐 twice asks")
    _tell(rds, keys, second, "p-0a1b2c3d", second_type)
    wait_shown(fake, topic, "🔐 twice asks to use Bash\ntouch told.txt")
    settled(rds, keys)
    retry_until(lambda: _drawn_buttons(fake, topic), 20, 0.05, "the options as drawn")
    dialogs = [m for m in bot_messages(fake, topic) if m.text.startswith(DIALOG)]
    assert len(dialogs) == 1, [m.text for m in bot_messages(fake, topic)]
    dialog = dialogs[0]
    assert dialog.text == "🔐 twice asks to use Bash\ntouch told.txt"
    assert dialog.edits  # the first telling, then both in its place
    assert "said just before" in shown(fake, topic)
    assert [row[0][0] for row in dialog.buttons] == ["Yes (default)", "No"]  # the options as drawn stay
    assert [row[0][1].split(":")[1] for row in dialog.buttons] == ["q-5f3c2a1b", "q-5f3c2a1b"]

    _tell(rds, keys, HOOK_DIALOG, "p-4e5f6a7b")
    dialogs = retry_until(
        lambda: (d := [m for m in bot_messages(fake, topic) if m.text.startswith(DIALOG)])[1:] and d,
        20,
        0.05,
        "the next",
    )
    assert dialogs[0].message_id == dialog.message_id  # the next dialog: a message of its own
    assert [[label for label, _data in row] for row in dialogs[1].buttons] == [
        ["Allow", "Always allow", "Deny"]
    ]


def _drawn_buttons(fake: FakeTelegram, topic: int) -> bool:
    dialogs = [m for m in bot_messages(fake, topic) if m.text.startswith(DIALOG)]
    return bool(dialogs) and [row[0][0] for row in dialogs[0].buttons] == ["Yes (default)", "No"]


@pytest.mark.parametrize("order", ["pane-then-hook", "pane-then-older-hook"])
def test_a_dialog_the_pane_showed_first_is_one_message_when_the_hook_tells_it(
    bot: BotProcess, fake: FakeTelegram, rds: redis.Redis, keys: Keys, order: str
) -> None:
    _dialogs_told_twice(bot, fake, rds, keys, order, together=False)


@pytest.mark.parametrize("order", list(TELLINGS))
def test_a_dialog_told_twice_at_once_is_one_message(
    bot: BotProcess, fake: FakeTelegram, rds: redis.Redis, keys: Keys, order: str
) -> None:
    _dialogs_told_twice(bot, fake, rds, keys, order, together=True)
