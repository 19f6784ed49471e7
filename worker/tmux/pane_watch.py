"""The pane watcher: once a tick, one `tmux list-panes` for all agents; capture only panes that printed.

The safety net behind the hooks: it reads each agent's pane with the pure parser and publishes `state`
changes, `rate_limited` and `stopped`. Idle agents cost nothing but their line in `list-panes`. A state
a hook decided is left alone unless the pane shows stronger evidence (worker/state_authority.py).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field

from bus.agents import Agent
from bus.errors import Conflict
from worker.errors import SessionGone
from worker.service.runtime import Runtime
from worker.tmux.dialog_events import tell_dialog
from worker.tmux.pane_state import PaneState, pane_state
from worker.tmux.parse import PaneInfo, needs_capture
from worker.tmux.retry import retry_notice
from worker.tmux.state_authority import pane_may_set

log = logging.getLogger(__name__)


@dataclass
class PaneWatcher:
    rt: Runtime
    captured_at: dict[str, float] = field(default_factory=dict)

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
        if quiet and agent.state not in ("creating", "unknown", "unreachable"):
            return  # nothing printed since we last looked
        try:
            now = time.time()
            text = self.rt.tmux.capture(agent.session)
        except SessionGone:
            self.record(agent, PaneState.STOPPED.value)
            return
        self.captured_at[agent.id] = now
        state = pane_state(text).value
        if tell_dialog(self.rt, agent, text) is not None:
            state = "permission"  # a dialog waits for a person, whatever else the screen shows
        retry = retry_notice(text) if state in ("error", "rate_limited") else None
        self.record(agent, state, retry)

    def record(self, agent: Agent, state: str, retry: dict[str, object] | None = None) -> None:
        """Store a state the watcher saw, unless a hook's state stands against it; publish `state` (and
        `rate_limited` / `stopped`; `error` with the retry facts while Claude Code retries) on a change."""
        current, by = self.rt.agents.state_of(agent.id)
        if not pane_may_set(current, by, state):
            return
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
        if retry is not None:
            self.rt.publish(
                "error",
                f"{agent.id}: API error ({retry['kind']}); Claude Code retries in {retry['retry_in']}s "
                f"(attempt {retry['attempt']}/{retry['attempts']})",
                data=retry,
                **common,
            )
        if state == "rate_limited":
            self.rt.publish("rate_limited", f"{agent.id} hit a rate limit", **common)
        elif state == "stopped":
            self.rt.publish("stopped", f"{agent.id} stopped (its session ended)", **common)
            self._give_back_claims(agent)

    def _give_back_claims(self, agent: Agent) -> None:
        """A stopped agent cannot finish what it holds: each claim fails this attempt at once, with why
        (back to ready while attempts remain), instead of waiting for `ib task reclaim`."""
        for task_id in self.rt.tasks.held_by(agent.id):
            reason = f"agent {agent.id} stopped (its session ended) while holding the task"
            try:
                self.rt.tasks.fail(task_id, agent.id, reason)
            except Conflict as e:  # finished or released in between: nothing to give back
                log.info("agent %s: task %s not failed: %s", agent.id, task_id, e)
                continue
            log.info("agent %s: stopped holding task %s; attempt failed, claim released", agent.id, task_id)
