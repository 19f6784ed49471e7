"""The pane watcher: once a tick, one `tmux list-panes` for all agents; capture only panes that printed.

The safety net behind the hooks: it reads each agent's pane with the pure parser and publishes `state`
changes, `rate_limited` and `stopped`. Idle agents cost nothing but their line in `list-panes`.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field

from bus.agents import Agent
from worker.errors import SessionGone
from worker.service.runtime import Runtime
from worker.tmux.pane_state import PaneState, pane_state
from worker.tmux.parse import PaneInfo, needs_capture

log = logging.getLogger(__name__)
TRUST_PROMPT = "Do you trust the files in this folder"


@dataclass
class PaneWatcher:
    rt: Runtime
    captured_at: dict[str, float] = field(default_factory=dict)
    trusted: set[str] = field(default_factory=set)

    def tick(self) -> None:
        agents = [a for a in self.rt.agents.all() if a.worker == self.rt.worker_id]
        if not agents:
            return
        panes = {p.session: p for p in self.rt.tmux.panes()}
        for agent in agents:
            self._look(agent, panes.get(agent.session))

    def _look(self, agent: Agent, pane: PaneInfo | None) -> None:
        if pane is None or pane.dead:
            self.record(agent, PaneState.STOPPED.value)
            return
        quiet = pane.activity is not None and not needs_capture(pane.activity, self.captured_at.get(agent.id))
        if quiet and agent.state not in ("creating", "unknown"):
            return  # nothing printed since we last looked
        try:
            now = time.time()
            text = self.rt.tmux.capture(agent.session)
        except SessionGone:
            self.record(agent, PaneState.STOPPED.value)
            return
        self.captured_at[agent.id] = now
        state = pane_state(text).value
        if state == "permission" and TRUST_PROMPT in text and agent.id not in self.trusted:
            self.trusted.add(agent.id)  # Claude Code asks once per new worktree; ours is trusted
            self.rt.tmux.send_keys(agent.session, "Enter")
        self.record(agent, state)

    def record(self, agent: Agent, state: str) -> None:
        """Store a state the watcher saw; publish `state` (and `rate_limited` / `stopped`) when it changed."""
        previous = self.rt.agents.set_state(agent.id, state)
        if previous is None:
            return
        log.info("agent %s: %s -> %s", agent.id, previous, state)
        common = {"sender": agent.id, **agent.event_fields()}
        self.rt.publish(
            "state",
            f"{agent.id}: {previous} → {state}",
            data={"from_state": previous, "to_state": state},
            **common,
        )
        if state == "rate_limited":
            self.rt.publish("rate_limited", f"{agent.id} hit a rate limit", **common)
        elif state == "stopped":
            self.rt.publish("stopped", f"{agent.id} stopped (its session ended)", **common)
