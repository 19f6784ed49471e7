"""The runaway watchdog: a thread of the worker blocked on `tool-calls:<worker>` (each tool call of its
agents, as their PreToolUse hook recorded it). A call repeated N times in a row is seen as it arrives; a
quiet turn and a fast burn are looked for every few seconds. A sign holds the agent (its next tool call is
refused) and sends one `runaway` event with the reason and the last calls.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import cast

import redis

from bus.errors import BusError
from bus.events.activity import THINKING
from bus.events.streams import Entry, consumer_name
from bus.readers.stream_reader import InGroup, background
from bus.stores import budget_store
from bus.stores.usage_store import entry_record
from worker.budgets.runaway import (
    AgentCalls,
    Call,
    Finding,
    Limits,
    burning,
    event_data,
    pause_reason,
    quiet,
    repeated,
)
from worker.errors import WorkerError
from worker.runtime import Runtime

log = logging.getLogger(__name__)

GROUP = "watchdog"
READ_COUNT = 500
SLOW_LOOK = 5.0  # seconds between two looks for quiet turns and fast burns
USAGE_READ = 500


def limits_of(rt: Runtime) -> Limits:
    s = rt.settings
    return Limits(s.runaway_repeats, s.runaway_quiet_minutes, s.runaway_tokens_per_minute)


class Watchdog:
    def __init__(self, rt: Runtime, reader: redis.Redis, stopping: threading.Event) -> None:
        self.rt = rt
        self.limits = limits_of(rt)
        group = InGroup(reader, rt.keys.tool_calls(rt.worker_id), GROUP, consumer_name(), "0")
        self.reader = background(
            stopping,
            reader,
            "runaway watchdog",
            group,
            self.handle,
            count=READ_COUNT,
            between=self._look_when_due,
        )
        self.agents: dict[str, AgentCalls] = {}
        self.thread: threading.Thread | None = None
        self.next_look = 0.0

    def start(self) -> None:
        self.thread = self.reader.in_thread("runaway-watchdog")

    def drain(self) -> None:
        """Take what is waiting now and return (burst mode: `ib worker --once`)."""
        self.reader.drain()

    def _look_when_due(self, _found: bool) -> None:
        if time.monotonic() >= self.next_look:
            self.look()
            self.next_look = time.monotonic() + SLOW_LOOK

    def handle(self, entries: list[Entry]) -> None:
        """Feed each call to its agent's record; a call repeated N times in a row holds the agent."""
        for _entry_id, fields in entries:
            agent = fields.get("agent", "")
            if not agent:
                continue
            calls = self.agents.setdefault(agent, AgentCalls(self.limits.repeats))
            if fields.get(budget_store.RESET):
                calls.forget(time.time())
                continue
            calls.add(
                Call(fields.get("tool", ""), fields.get("digest", ""), fields.get("summary", ""), _at(fields))
            )
            finding = repeated(calls, self.limits)
            if finding is not None:
                self.act(agent, finding)

    def look(self) -> None:
        """Quiet turns and fast burns of this worker's working agents."""
        now = time.time()
        for agent in self.rt.agents.of_worker(self.rt.worker_id):
            if agent.state != "working":
                continue
            calls = self.agents.setdefault(agent.id, AgentCalls(self.limits.repeats))
            try:
                finding = quiet(calls, agent.state_at, self._text_at(agent.id), now, self.limits) or burning(
                    calls, self._usage(agent.id), now, self.limits
                )
            except (BusError, WorkerError, OSError) as e:
                log.warning("runaway watchdog: looking at %s failed: %s", agent.id, e)
                continue
            if finding is not None:
                self.act(agent.id, finding)

    def act(self, agent_id: str, finding: Finding) -> bool:
        """Hold the agent and say why, once: a held agent is not held (or told about) again."""
        client, keys = self.rt.client, self.rt.keys
        if not budget_store.hold(
            client, keys, agent_id, budget_store.WATCHDOG, pause_reason(finding), rule=finding.rule
        ):
            return False
        agent = self.rt.agents.find(agent_id)
        fields = agent.event_fields() if agent is not None else {"agent": agent_id}
        self.rt.publish("runaway", f"{agent_id} paused: {finding.reason}", **fields, data=event_data(finding))
        log.info("runaway watchdog: %s paused (%s): %s", agent_id, finding.rule, finding.reason)
        return True

    def _text_at(self, agent_id: str) -> float:
        """When the agent last wrote text (its output stream), 0 when not lately."""
        entries = cast(
            "list[tuple[str, dict[str, str]]]",
            self.rt.client.xrevrange(self.rt.keys.output(agent_id), count=50),
        )
        for entry_id, fields in entries:
            if fields.get("kind") not in ("text", THINKING):
                continue
            return int(str(entry_id).partition("-")[0]) / 1000
        return 0.0

    def _usage(self, agent_id: str) -> list[tuple[float, int]]:
        entries = cast(
            "list[tuple[str, dict[str, str]]]",
            self.rt.client.xrevrange(self.rt.keys.usage(agent_id), count=USAGE_READ),
        )
        found = []
        for _entry_id, fields in entries:
            record, _project = entry_record(fields)
            found.append((record.at, record.input + record.output + record.cache_write))
        return found


def _at(fields: dict[str, str]) -> float:
    try:
        return float(fields.get("at", ""))
    except ValueError:
        return time.time()
