"""Approve from Telegram for real (bot process, fake Bot API, worker, git): the tap is answered at once with
the change's place in the merge queue, while the merge still waits behind another, and one message in the
topic follows it to the end, edited in place (the answer once came after "Merged", with an empty popup),
across a restart of the bot too. A record of a followed approval that does not read is dropped."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest
import redis

from bot.render.callbacks import Action, Callback
from bus.stores.agent_store import AgentStore
from bus.tasks.merge_request import MergeRequest
from bus.tasks.merges import MergeStore
from bus.wire.keys import Keys
from tests.bot_process import USER, BotProcess, Worker
from tests.cli import IbRunner
from tests.fake_telegram import FakeMessage, FakeTelegram
from tests.integration.test_bot import (
    bot_messages,
    emit,
    settled,
    spawn,
    sync_with_bot,
    wait_agent_topic,
    wait_shown,
)
from tests.waiting import retry_until


@dataclass
class Approved:
    """shipit done and approved, its merge waiting behind another (`ahead`), the tap answered."""

    topic: int
    project: str
    store: MergeStore
    ahead: MergeRequest
    before: set[int]  # the topic's messages before the tap
    popup: str | None


def _approved_behind_another(
    agents_ib: IbRunner, bot: BotProcess, fake: FakeTelegram, rds: redis.Redis, keys: Keys
) -> Approved:
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
    wait_shown(fake, topic, f"✓ shipit approved ({project} → main)\n⏳ in the merge queue, position 2")
    return Approved(topic, project, store, ahead, before, popup.text)


def _the_note(fake: FakeTelegram, approved: Approved) -> FakeMessage:
    """The one message the approval added to the topic, once it says the change is merged."""
    wait_shown(fake, approved.topic, "✓ merged into main (")
    new = [m for m in bot_messages(fake, approved.topic) if m.message_id not in approved.before]
    assert len(new) == 1, [m.text for m in new]
    (note,) = new
    head, stage = note.text.splitlines()[:2]
    assert head == f"✓ shipit approved ({approved.project} → main)"
    assert stage.startswith("✓ merged into main (")
    assert any("⏳ in the merge queue, position 2" in earlier for earlier in note.edits)
    return note


def test_approve_answers_the_tap_with_its_place_and_edits_one_message(
    agents_ib: IbRunner,
    bot: BotProcess,
    fake: FakeTelegram,
    running_worker: Worker,
    rds: redis.Redis,
    keys: Keys,
    repo: Path,
) -> None:
    approved = _approved_behind_another(agents_ib, bot, fake, rds, keys)
    assert approved.popup == "shipit is in the merge queue, position 2"
    waiting = approved.store.open_for(approved.project, "shipit")
    assert waiting is not None and waiting.status == "queued"  # answered while the merge waits its turn

    approved.store.finish(approved.ahead.replace(status="failed", error="given up by the test"))
    retry_until(lambda: "shipit" not in agents_ib.run("list").stdout, 60, 0.1, "merged and torn down")
    settled(rds, keys)
    _the_note(fake, approved)
    assert (repo / "shipped.txt").read_text() == "yes\n"
    retry_until(lambda: not rds.exists(keys.approvals_followed), 20, 0.05, "the approval forgotten")


def test_an_approval_merged_while_the_bot_was_down_ends_in_its_note_after_the_restart(
    agents_ib: IbRunner,
    bot: BotProcess,
    fake: FakeTelegram,
    running_worker: Worker,
    rds: redis.Redis,
    keys: Keys,
    repo: Path,
) -> None:
    approved = _approved_behind_another(agents_ib, bot, fake, rds, keys)
    bot.stop()
    approved.store.finish(approved.ahead.replace(status="failed", error="given up by the test"))
    retry_until(lambda: "shipit" not in agents_ib.run("list").stdout, 60, 0.1, "merged and torn down")
    assert (repo / "shipped.txt").read_text() == "yes\n"
    assert rds.hlen(keys.approvals_followed) == 1  # still followed: nobody said it ended

    bot.start()
    _the_note(fake, approved)
    settled(rds, keys)
    retry_until(lambda: not rds.exists(keys.approvals_followed), 20, 0.05, "the approval forgotten")


UNREADABLE = {  # records of followed approvals a restarted bot cannot follow
    "not-json": "{not json",
    "no-message": '{"agent": "gone", "merge": "m-1", "thread": null, "where": "p → main", "started": 0}',
    "other-merge": '{"agent": "gone", "merge": "m-2", "thread": null, "message": 5, "where": "p → main", '
    '"started": 0}',
}


@pytest.mark.parametrize("raw", list(UNREADABLE.values()), ids=list(UNREADABLE))
def test_an_approval_record_that_does_not_read_is_dropped_and_the_bot_goes_on(
    bot: BotProcess, fake: FakeTelegram, rds: redis.Redis, keys: Keys, raw: str
) -> None:
    rds.hset(keys.approvals_followed, "m-1", raw)
    bot.start()
    retry_until(lambda: not rds.exists(keys.approvals_followed), 20, 0.05, "the record dropped")
    emit(rds, keys, "spawned", "later started", agent="later", sender="system")
    topic = wait_agent_topic(fake, "later")
    emit(rds, keys, "message", "said afterwards", agent="later")
    wait_shown(fake, topic, "said afterwards")
    assert "approval of merge m-1: its record does not read" in bot.log.read_text()
