"""/cost in Telegram: the tokens and dollars of the topic's agent, of the project, or of every agent (in
General), from the usage streams the workers keep; a name that names nothing, or a bad span, in one line."""

from __future__ import annotations

import time
import uuid

import redis

from bus.costs.usage import Usage
from bus.stores import usage_store
from bus.stores.agent_store import Agent, AgentStore
from bus.wire.keys import Keys
from tests.bot_process import USER, BotProcess
from tests.fake_telegram import FakeTelegram
from tests.integration.test_bot import bind_project, emit, settled, wait_agent_topic, wait_shown

SONNET = "claude-sonnet-4-5"


def test_cost_by_topic_by_name_and_in_general(
    bot: BotProcess, fake: FakeTelegram, rds: redis.Redis, keys: Keys
) -> None:
    worker = f"w-{uuid.uuid4().hex[:6]}"
    store = AgentStore(rds, keys)
    for agent, home in (("painter", "shed"), ("sweeper", "shed"), ("scribe", "docs")):
        store.save(Agent(id=agent, goal="x", project=home, worker=worker, session="s"))
    now = time.time()
    # painter: $3 of input and $15 of output; sweeper: one old answer (two days ago); scribe: unpriced
    usage_store.append(rds, keys, "painter", "shed", [Usage(SONNET, now, 1_000_000, 1_000_000)])
    usage_store.append(rds, keys, "sweeper", "shed", [Usage(SONNET, now - 2 * 86400, 0, 0, 0, 1_000_000)])
    usage_store.append(rds, keys, "scribe", "docs", [Usage("claude-mystery-1", now, 500, 500)])
    bot.start()
    project = bind_project(fake, "shed")
    fake.inject_message(USER, "/cost", thread_id=project)
    wait_shown(
        fake,
        project,
        "Cost of project shed: $18.30 · 3.0M tokens",
        "painter · $18.00 · 2.0M tokens (in 1.0M, out 1.0M, cache write 0, read 0)",
        "sweeper · $0.30 · 1.0M tokens",
    )
    fake.inject_message(USER, "/cost --since 1d", thread_id=project)
    wait_shown(fake, project, "Cost of project shed in the last 1d: $18.00 · 2.0M tokens")
    emit(rds, keys, "spawned", agent="painter", project="shed")
    topic = wait_agent_topic(fake, "painter")
    settled(rds, keys)  # the topic is the agent's once the bot has made it and bound it, not before
    fake.inject_message(USER, "/cost", thread_id=topic)
    wait_shown(fake, topic, "Cost of agent painter: $18.00 · 2.0M tokens")
    fake.inject_message(USER, "/cost scribe", thread_id=topic)
    wait_shown(fake, topic, "Cost of agent scribe: $0.00 + unpriced (claude-mystery-1) · 1k tokens")
    wait_shown(fake, topic, "No price for claude-mystery-1: set IB_PRICES.")
    fake.inject_message(USER, "/cost")
    wait_shown(fake, None, "Cost of all agents: $18.30 + unpriced (claude-mystery-1) · 3.0M tokens")
    for bad, said in (
        ("/cost nobody", "⚠ no agent 'nobody' (see /agents)"),
        ("/cost --since soon", "⚠ --since 'soon' is not a duration"),
        ("/cost --since", "⚠ usage: /cost [AGENT] [--since SPAN]"),
        ("/cost a b", "⚠ usage: /cost [AGENT] [--since SPAN]"),
    ):
        fake.inject_message(USER, bad, thread_id=project)
        wait_shown(fake, project, said)
