"""Approve from Telegram for real (bot process, fake Bot API, worker, git): the tap is answered at once with
the change's place in the merge queue, while the merge still waits behind another, and one message in the
topic follows it to the end, edited in place (the answer once came after "Merged", with an empty popup)."""

from __future__ import annotations

from pathlib import Path

import redis

from bot.callbacks import Action, Callback
from bus.agent_store import AgentStore
from bus.keys import Keys
from bus.merges import MergeStore
from tests.bot_process import USER, BotProcess, Worker
from tests.cli import IbRunner
from tests.fake_telegram import FakeTelegram
from tests.integration.test_bot import (
    bot_messages,
    settled,
    spawn,
    sync_with_bot,
    wait_agent_topic,
    wait_shown,
)
from tests.waiting import retry_until


def test_approve_answers_the_tap_with_its_place_and_edits_one_message(
    agents_ib: IbRunner,
    bot: BotProcess,
    fake: FakeTelegram,
    running_worker: Worker,
    rds: redis.Redis,
    keys: Keys,
    repo: Path,
) -> None:
    bot.start()
    spawn(agents_ib, "shipit", "fake: write shipped.txt yes", "fake: commit ship it", "fake: done")
    topic = wait_agent_topic(fake, "shipit")
    wait_shown(fake, topic, "✓ shipit completed", timeout=40)
    agent = AgentStore(rds, keys).get("shipit")
    project = agent.project or Path(agent.root).name
    store = MergeStore(rds, keys, 1000)
    ahead = store.enqueue(project=project, agent="other", branch="agent/other", target="main", worker="away")
    settled(rds, keys)
    sync_with_bot(fake, topic)
    done = next(m for m in bot_messages(fake, topic) if "shipit completed" in m.text)
    before = {m.message_id for m in bot_messages(fake, topic)}
    approve = Callback(Action.APPROVE, "shipit").encode()
    assert approve is not None

    tap = fake.inject_callback(USER, done.message_id, approve)
    popup = retry_until(
        lambda: next((a for a in fake.callback_answers if a.query_id == tap), None), 30, 0.05, "the answer"
    )
    assert popup.text == "shipit is in the merge queue, position 2"
    wait_shown(fake, topic, f"✓ shipit approved ({project} → main)\n⏳ in the merge queue, position 2")
    waiting = store.open_for(project, "shipit")
    assert waiting is not None and waiting.status == "queued"  # answered while the merge waits its turn

    store.finish(ahead.replace(status="failed", error="given up by the test"))  # the queue moves on
    retry_until(lambda: "shipit" not in agents_ib.run("list").stdout, 60, 0.1, "merged and torn down")
    settled(rds, keys)
    wait_shown(fake, topic, "✓ merged into main (")
    new = [m for m in bot_messages(fake, topic) if m.message_id not in before]
    assert len(new) == 1, [m.text for m in new]
    (note,) = new
    head, stage = note.text.splitlines()[:2]
    assert head == f"✓ shipit approved ({project} → main)"
    assert stage.startswith("✓ merged into main (")
    assert any("⏳ in the merge queue, position 2" in earlier for earlier in note.edits)
    assert (repo / "shipped.txt").read_text() == "yes\n"
