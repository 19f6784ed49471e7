"""What each agent with a topic is doing, kept up to date from its output items and its events, and
handed to the sender as the topic's live status line.

The source is the agent's output stream (`out:<agent>`), which the bot reads anyway for the agent's
output: tool uses carry the tool and its argument, every item the transcript's time. A turn starts
with a `prompt` item and ends with a turn-ending event (complete, waiting, question, ...); then the
line is removed. A tick refreshes the elapsed times of working agents.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from bot.render import escape
from bot.sender import Sender
from bot.topics import TopicRegistry
from bus.activity import Activity, activity_line, end_turn, ends_turn, fold_item
from bus.events import Event


class StatusBoard:
    def __init__(
        self,
        sender: Sender,
        registry: TopicRegistry,
        every: float,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.sender = sender
        self.registry = registry
        self.every = every  # seconds between two refreshes of the elapsed times
        self.clock = clock
        self.activities: dict[str, Activity] = {}

    def item(self, agent: str, fields: dict[str, str]) -> None:
        """One output item of `agent` (an `out:<agent>` entry), in stream order."""
        before = self.activities.get(agent, Activity())
        after = fold_item(before, fields, self.clock())
        if after != before:
            self.activities[agent] = after
            self._show(agent)

    def event(self, event: Event) -> None:
        """An event: one that ends an agent's turn removes its status line."""
        if event.agent and event.agent in self.activities and ends_turn(event.type, event.data):
            self.activities[event.agent] = end_turn(self.activities[event.agent])
            self._show(event.agent)

    def _show(self, agent: str) -> None:
        thread = self.registry.thread_of("agent", agent)
        if thread is None:
            return
        line = activity_line(self.activities[agent], self.clock())
        self.sender.set_status(thread, escape(line))

    async def run(self) -> None:
        while True:
            await asyncio.sleep(self.every)
            for agent, activity in list(self.activities.items()):
                if activity.working:
                    self._show(agent)
