"""/limits in Telegram and the `limited` / `resumed` events in the agent's topic: "limited until 15:00",
read from the limits the bus holds (the hook wrote them), as `ib limits` shows them."""

from __future__ import annotations

import time
import uuid

import redis

from bus.costs.usage_limits import Reset, until_text
from bus.stores.agent_store import Agent, AgentStore
from bus.stores.limit_store import LimitStore
from bus.wire.keys import Keys
from tests.bot_process import USER, BotProcess
from tests.fake_telegram import FakeTelegram
from tests.integration.test_bot import bind_project, emit, wait_agent_topic, wait_shown


def test_limits_and_the_limited_agent_s_topic(
    bot: BotProcess, fake: FakeTelegram, rds: redis.Redis, keys: Keys
) -> None:
    AgentStore(rds, keys).save(
        Agent(id="painter", goal="x", project="shed", worker=f"w-{uuid.uuid4().hex[:6]}")
    )
    bot.start()
    project = bind_project(fake, "shed")
    fake.inject_message(USER, "/limits", thread_id=project)
    wait_shown(fake, project, "No account is limited: agents and /auto go on as usual.")

    now = time.time()
    reset = now + 3600
    LimitStore(rds, keys).park("default", "painter", Reset(reset, "text"), "five_hour", now)
    until = until_text(reset, now)
    data = {"until": until, "window": "five_hour", "reset_at": reset, "note": ""}
    said = f"painter is limited until {until} (five_hour)"
    emit(rds, keys, "limited", said, agent="painter", project="shed", sender="painter", data=data)
    topic = wait_agent_topic(fake, "painter")
    wait_shown(
        fake,
        topic,
        f"⏳ painter limited until {until} (five_hour limit)",
        "It goes on by itself at the reset.",
    )
    fake.inject_message(USER, "/limits", thread_id=project)
    wait_shown(fake, project, f"default: limited until {until} (five_hour, since", "parked: painter")
    emit(
        rds, keys, "resumed", "painter resumed", agent="painter", project="shed", data={"window": "five_hour"}
    )
    wait_shown(fake, topic, "▶ painter resumed: its five_hour limit has reset")
