"""A `conflict_risk` event through the real bot process and the fake Bot API: in full in both agents' topics
(each made when it has none) and as one line in the project topic."""

from __future__ import annotations

import redis

from bus.wire.keys import Keys
from tests.bot_process import BotProcess
from tests.fake_telegram import FakeTelegram
from tests.integration.test_bot import bind_project, emit, settled, wait_agent_topic, wait_shown
from worker.conflicts.merge_tree import parse_hunks
from worker.conflicts.overlap import Collision, FileOverlap, event_data, message


def test_a_conflict_risk_shows_in_both_agents_topics_and_the_project_topic(
    bot: BotProcess, fake: FakeTelegram, rds: redis.Redis, keys: Keys
) -> None:
    bot.start()
    project = bind_project(fake, "backend")
    hunks = parse_hunks(
        "def add(a, b):\n<<<<<<< x\n    return b + a\n=======\n    return a + b + 1\n>>>>>>> y\n"
    )
    collision = Collision("bob", "ann", "agent", (FileOverlap("calc.py", "content", hunks, ("1", "2")),))
    emit(
        rds,
        keys,
        "conflict_risk",
        message(collision),
        agent="bob",
        project="backend",
        data=event_data(collision),
    )

    full = (
        "⚠ Conflict risk: bob and ann change the same code (it will not merge cleanly)",
        "• calc.py, around line 2 (content)",
        "  bob: return b + a",
        "  ann: return a + b + 1",
    )
    for agent in ("bob", "ann"):
        wait_shown(fake, wait_agent_topic(fake, agent), *full)
    wait_shown(fake, project, full[0])  # its first line
    settled(rds, keys)
    assert sorted(t.name for t in fake.topics() if t.thread_id != project) == [
        "ann [backend]",
        "bob [backend]",
    ]
