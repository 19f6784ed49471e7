"""The real bot under a flood of routine events, against the fake Bot API with its limits on: more than
the chat's budget carries, so each agent's topic gets a digest instead of a message per event, while a
permission asked in the middle of the flood goes out at once; every event is acknowledged."""

from __future__ import annotations

import time
from typing import Any

import redis

from bot.feeds.consumer import GROUP, SEEN_SCOPE
from bus.wire.keys import Keys
from tests.bot_process import SCALE, BotProcess
from tests.fake_telegram import FakeTelegram
from tests.integration.test_bot import bot_messages, emit, settled, shown, wait_shown
from tests.waiting import retry_until

AGENTS = [f"flood-{i}" for i in range(30)]
STATES = ["running", "waiting", "running", "complete"]
DIALOG: dict[str, Any] = {
    "kind": "permission",
    "title": "Do you want to proceed?",
    "options": [{"number": 1, "label": "Yes"}, {"number": 2, "label": "No"}],
    "default": 0,
    "prompt_id": "p-flood",
}


def test_a_flood_folds_into_digests_while_a_permission_goes_first(
    bot: BotProcess, fake: FakeTelegram, rds: redis.Redis, keys: Keys
) -> None:
    topics = {agent: fake.create_topic(agent) for agent in [*AGENTS, "asker"]}
    rds.hset(keys.topics("agent"), mapping={agent: str(thread) for agent, thread in topics.items()})
    bot.start()

    routine: list[str] = []
    for i, (before, after) in enumerate(zip(["waiting", *STATES], STATES, strict=False)):
        for agent in AGENTS:
            data = {"from_state": before, "to_state": after}
            routine.append(emit(rds, keys, "state", f"{agent}: {before} → {after}", agent=agent, data=data))
        if i == 1:  # a person is asked in the middle of the flood
            asked_at = time.monotonic()
            asked = emit(rds, keys, "permission", "asker asks", agent="asker", data=DIALOG)
    wait_shown(fake, topics["asker"], "🔐 asker asks", timeout=10)
    waited = time.monotonic() - asked_at
    # one by one, the 120 routine messages would take 6 of Telegram's minutes (18 s here); the
    # permission goes within a few of Telegram's seconds of being read
    assert waited < 60 / SCALE, f"the permission waited {waited:.1f} s"

    settled(rds, keys)  # every event acknowledged: the folded ones with their digests
    assert rds.xpending(keys.events, GROUP)["pending"] == 0
    for entry_id in [*routine, asked]:
        role = "data"
        assert rds.exists(keys.seen(SEEN_SCOPE, f"{entry_id}:{role}")), entry_id

    digests = [agent for agent in AGENTS if "events folded" in shown(fake, topics[agent])]
    assert len(digests) >= len(AGENTS) // 2, {a: shown(fake, topics[a]) for a in AGENTS[:3]}
    messages = sum(len(bot_messages(fake, topics[agent])) for agent in AGENTS)
    assert messages < len(routine) // 2  # a digest each, not a message per event
    folded = shown(fake, topics[digests[0]])
    assert "1 agent:" in folded

    retry_until(lambda: "4 events folded" in shown(fake, topics[digests[-1]]), 20, 0.05, "the digest edited")
