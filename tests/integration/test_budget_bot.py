"""The buttons under a paused agent in Telegram, through the fake Bot API, with `ib worker` and a fake agent
in tmux: the runaway watchdog's Continue lifts the pause, a used-up budget's "Raise by $1.00" raises it and
lifts the pause, and Stop kills the agent."""

from __future__ import annotations

from pathlib import Path

import redis

from bus.stores import budget_store
from bus.wire.keys import Keys
from tests.bot_process import USER, BotProcess, Worker
from tests.cli import IbRunner
from tests.fake_telegram import FakeMessage, FakeTelegram
from tests.integration.test_bot import bot_messages, received, settled, spawn, wait_agent_topic, wait_shown
from tests.reads import agent_ids
from tests.tool_calls import pre_tool_use
from tests.waiting import retry_until

AGENT = "spender"


def loop(ib: IbRunner, times: int = 6) -> None:
    """The same Bash call `times` times in a row through the agent's PreToolUse hook (6: the default)."""
    for _ in range(times):
        pre_tool_use(ib, ib.cwd, AGENT, "Bash", command="ls -la")


def newest(fake: FakeTelegram, thread: int, start: str) -> FakeMessage:
    """The newest message showing `start`: the bot merges events queued together into one message, and one
    with buttons ends it, so the line may follow others in it."""
    found = [m for m in bot_messages(fake, thread) if start in m.text]
    assert found, f"no message showing {start!r}"
    return found[-1]


def test_continue_raise_and_stop_buttons(
    agents_ib: IbRunner,
    bot: BotProcess,
    fake: FakeTelegram,
    running_worker: Worker,
    rds: redis.Redis,
    keys: Keys,
    tmp_path: Path,
) -> None:
    bot.start()
    spawn(agents_ib, AGENT, "fake: wait")
    topic = wait_agent_topic(fake, AGENT)
    wait_shown(fake, topic, f"⏳ {AGENT} is waiting", timeout=40)

    loop(agents_ib)
    paused = f"⏸ {AGENT} is paused by the runaway watchdog"
    wait_shown(fake, topic, paused, "Why: the same call 6 times in a row: Bash: ls -la", "  • Bash: ls -la")
    shown = newest(fake, topic, paused)
    assert [label for label, _data in shown.buttons[0]] == ["▶ Continue", "✗ Stop"]
    fake.inject_callback(USER, shown.message_id, shown.buttons[0][0][1])
    continued = shown
    wait_shown(fake, topic, f"▶ {AGENT} goes on")
    retry_until(lambda: "go on where you stopped" in received(tmp_path), 30, 0.1, "the agent told to go on")
    assert not rds.exists(keys.hold(AGENT))
    assert pre_tool_use(agents_ib, agents_ib.cwd, AGENT, "Bash", command="ls -la") is None
    retry_until(lambda: (fake.message(shown.message_id) or shown).buttons == [], 10, 0.05, "buttons gone")

    assert agents_ib.run("budget", "set", "--agent", AGENT, "1$").returncode == 0
    pipe = rds.pipeline()  # what the worker's transcript tail adds for answers worth $1.20
    budget_store.charge(pipe, keys, AGENT, "", budget_store.today(), 1.2, 400_000)
    pipe.execute()
    used_up = f"⏸ {AGENT} is paused: budget used up"
    wait_shown(fake, topic, used_up, f"agent {AGENT} budget: $1.20 of $1.00 (120%)")
    shown = newest(fake, topic, used_up)
    assert [label for label, _data in shown.buttons[0]] == ["Raise by $1.00", "✗ Stop"]
    assert "Paused by ittybus" in (pre_tool_use(agents_ib, agents_ib.cwd, AGENT, "Bash", command="ls") or "")
    fake.inject_callback(USER, continued.message_id, continued.buttons[0][0][1])  # an old Continue
    wait_shown(fake, topic, f"⚠ {AGENT} is paused by a budget, not the watchdog: ib budget raise {AGENT}")
    assert rds.hget(keys.hold(AGENT), "kind") == "budget"
    fake.inject_callback(USER, shown.message_id, shown.buttons[0][0][1])
    wait_shown(fake, topic, f"✓ The agent {AGENT} budget is now $2.00 ($1.20 spent); {AGENT} goes on")
    note = f"ittybus: the agent {AGENT} budget is now $2.00 ($1.20 spent). Go on where you stopped."
    retry_until(lambda: note in received(tmp_path), 30, 0.1, "the agent told of the raise")
    assert pre_tool_use(agents_ib, agents_ib.cwd, AGENT, "Bash", command="ls") is None

    loop(agents_ib)
    retry_until(
        lambda: sum(m.text.count(paused) for m in bot_messages(fake, topic)) == 2, 20, 0.05, "paused again"
    )
    settled(rds, keys)
    shown = newest(fake, topic, paused)
    fake.inject_callback(USER, shown.message_id, shown.buttons[0][1][1])
    retry_until(lambda: AGENT not in agent_ids(agents_ib), 30, 0.1, "the agent torn down")
    wait_shown(fake, topic, f"✗ Killed {AGENT}")
    gone = (keys.hold(AGENT), keys.budget("agent", AGENT), keys.spent("agent", AGENT))
    assert rds.exists(*gone) == 0  # a new agent of the same name starts unpaused, with no budget
