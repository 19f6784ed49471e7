"""/merges in a project's topic, against the fake Bot API and a real Redis: the merge queue in merge order,
the smaller of two overlapping changes first with why, and an empty queue said as such."""

from __future__ import annotations

import redis

from bus.tasks.merges import MergeStore
from bus.wire.keys import Keys
from tests.bot_process import USER, BotProcess
from tests.fake_telegram import FakeTelegram
from tests.integration.test_bot import bind_project, wait_shown


def test_merges_shows_the_queue_in_merge_order(
    bot: BotProcess, fake: FakeTelegram, rds: redis.Redis, keys: Keys
) -> None:
    store = MergeStore(rds, keys, 1000)
    big = store.enqueue(
        project="shop",
        agent="big",
        branch="agent/big",
        target="main",
        worker="away",
        size=61,
        changed=("calc.py",),
    )
    store.enqueue(
        project="shop",
        agent="small",
        branch="agent/small",
        target="main",
        worker="away",
        size=1,
        changed=("calc.py",),
    )
    bot.start()
    empty = bind_project(fake, "empty")
    fake.inject_message(USER, "/merges", thread_id=empty)
    wait_shown(fake, empty, "The merge queue of empty is empty.")
    shop = bind_project(fake, "shop")
    fake.inject_message(USER, "/merges", thread_id=shop)
    wait_shown(
        fake,
        shop,
        "shop: 2 in the merge queue\n"
        "1. small (agent/small → main, queued, 1 lines)\n"
        f"   ↑ before merge {big.id} (big, 61 changed lines, both change calc.py): the smaller change "
        "goes first (1 changed line)\n"
        "2. big (agent/big → main, queued, 61 lines)",
    )
