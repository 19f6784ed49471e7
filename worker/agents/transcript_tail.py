"""Tailing agents' Claude Code transcripts: new lines since the stored offset become items on `out:<agent>`.

The offset lives on the agent's record, with the transcript it is in (a program that starts a new
session names a new one), so a restarted worker goes on where it stopped; a line cut in half stays for the
next tick. Read once a tick, and at once when an agent's turn ends. The same lines give
the tokens of each model answer (`bus.stores.usage_store`); the agent's running cost rides on the items that
carry the context's size, for the live status line.
"""

from __future__ import annotations

import datetime as dt
import logging
import os
from collections.abc import Callable
from dataclasses import dataclass, field

from bus.costs.usage import Usage, spend
from bus.events.activity import TURN_END
from bus.stores import usage_store
from bus.stores.agent_store import USAGE_USD, Agent
from bus.stores.hashes import append_entry, read_hash
from bus.wire.agent_update import update_if_whole
from worker.programs.program import TranscriptReading
from worker.programs.registry import program_of
from worker.runtime import Runtime

log = logging.getLogger(__name__)
CHUNK = 1 << 20
OUTPUT_MAXLEN = 2000


@dataclass
class TranscriptTailer:
    rt: Runtime
    on_answers: Callable[[Agent, list[Usage]], None] | None = None  # the budgets (worker.budgets.keeper)
    parsers: dict[str, TranscriptReading] = field(default_factory=dict)

    def tick(self, agents: list[Agent] | None = None) -> int:
        """What this worker's agents' transcripts added (`agents`: as the worker read them for this tick)."""
        published = 0
        for agent in self.rt.agents.of_worker(self.rt.worker_id) if agents is None else agents:
            if agent.transcript_path:
                published += self._tail(agent)
        return published

    def turn_ended(self, agent_id: str, event_id: str) -> int:
        """An agent's turn ended (event `event_id`, its Stop hook's): what the transcript holds of the
        turn is published now, not at the next tick, then a `turn_end` item that says so (the bot shows
        the end below the turn's output, and knows when the transcript lacked the last words)."""
        agent = self.rt.agents.find(agent_id)
        if agent is None or agent.worker != self.rt.worker_id or not agent.transcript_path:
            return 0
        published = self._tail(agent)
        at = dt.datetime.now(dt.UTC).isoformat(timespec="milliseconds")
        fields = {"kind": TURN_END, "text": "", "tool": "", "ts": at, "event": event_id}
        append_entry(self.rt.client, self.rt.keys.output(agent.id), fields, OUTPUT_MAXLEN)
        return published

    def _tail(self, agent: Agent) -> int:
        key = self.rt.keys.agent(agent.id)
        record = read_hash(self.rt.client, key)
        offset = int(record.get("transcript_offset") or 0)
        if record.get("transcript_tailed", agent.transcript_path) != agent.transcript_path:
            offset = 0  # a new transcript (a fresh session): read from its start, with a new parser
            self.parsers.pop(agent.id, None)
        try:
            size = os.stat(agent.transcript_path).st_size
            if size <= offset:
                return 0
            with open(agent.transcript_path, "rb") as f:
                f.seek(offset)
                data = f.read(min(CHUNK, size - offset))
        except OSError:
            return 0
        program = program_of(agent)
        parser = self.parsers.get(agent.id) or self.parsers.setdefault(agent.id, program.transcript_reader())
        items, consumed = parser.feed(data)
        reader = program.usage_reader(record.get("usage_last", ""), agent.task)
        answers = reader.lines(data[:consumed].splitlines())
        usd = _number(record.get(USAGE_USD, "")) + spend(answers, self.rt.settings.prices).usd
        pipe = self.rt.client.pipeline()
        for item in items:
            fields = {"kind": item.kind, "text": item.text, "tool": item.tool or "", "ts": item.ts or ""}
            if item.tokens is not None:
                fields["tokens"] = str(item.tokens)
                fields["usd"] = f"{usd:.6f}"
            append_entry(pipe, self.rt.keys.output(agent.id), fields, OUTPUT_MAXLEN)
        tailed = {"transcript_offset": str(offset + consumed), "transcript_tailed": agent.transcript_path}
        if usage_store.append(pipe, self.rt.keys, agent.id, agent.project, answers):
            tailed.update({"usage_last": reader.last, USAGE_USD: f"{usd:.6f}"})
        elif reader.last != record.get("usage_last", ""):  # no answer in this piece, but the turn's model
            tailed["usage_last"] = reader.last
        pipe.execute_command(*update_if_whole(key, tailed))  # type: ignore[no-untyped-call]  # not once removed
        pipe.execute()
        if answers and self.on_answers is not None:
            self.on_answers(agent, answers)
        return len(items)


def _number(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        return 0.0
