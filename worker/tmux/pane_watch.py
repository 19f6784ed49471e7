"""The pane watcher: once a tick, one `tmux list-panes` for all agents; capture only panes that printed.

The safety net behind the hooks: it reads each agent's pane with the pure parser and publishes `state`
changes and `stopped`. Idle agents cost nothing but their line in `list-panes`. A state a hook decided is
left alone unless the pane shows stronger evidence (worker/state_authority.py). A turn's end (complete,
waiting, error) is the hooks' event to raise: the pane only moves the state.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field

from bus.agents import Agent
from bus.errors import Conflict
from worker.errors import SessionGone
from worker.hooks.events import FROM_PANE, stopped_reason
from worker.service.runtime import Runtime
from worker.tmux.dialog_events import DRAW_WAIT, tell_dialog
from worker.tmux.pane_state import PaneState, pane_state
from worker.tmux.parse import PaneInfo, needs_capture
from worker.tmux.retry import retry_detail
from worker.tmux.state_authority import pane_may_set

log = logging.getLogger(__name__)


@dataclass
class PaneWatcher:
    rt: Runtime
    captured_at: dict[str, float] = field(default_factory=dict)
    claims_checked: set[str] = field(default_factory=set)  # stopped agents whose claims were looked at
    drawn: set[str] = field(default_factory=set)  # hooks' dialogs (prompt ids) seen on the pane

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
        dialog = tell_dialog(self.rt, agent, text)
        if dialog is not None:
            state = "permission"  # a dialog waits for a person, whatever else the screen shows
        self.record(agent, state, self._told_not_drawn(agent, dialog is not None))
        self._note_retry(agent, text, state)

    def _told_not_drawn(self, agent: Agent, drawn: bool) -> bool:
        """Whether a hook told of a dialog that Claude Code has not drawn yet: it runs the PermissionRequest
        hook before drawing, and a busy machine draws late; meanwhile the screen still shows the turn."""
        if agent.state != "permission":
            return False
        prompt = self.rt.prompts.get(agent.id)
        if prompt is None or prompt.tool == FROM_PANE or self.rt.prompts.answered(prompt.id):
            return False
        if drawn:
            self.drawn.add(prompt.id)
        return prompt.id not in self.drawn and time.time() - prompt.at < DRAW_WAIT

    def _note_retry(self, agent: Agent, text: str, state: str) -> None:
        """While Claude Code retries an API call its turn goes on: the retry is the agent's detail
        (`ib list`, `ib info`), not an `error` event."""
        detail = retry_detail(text) if state == "running" else ""
        if detail != agent.detail:
            self.rt.agents.update(agent.id, detail=detail)

    def record(self, agent: Agent, state: str, told_not_drawn: bool = False) -> None:
        """Store a state the watcher saw, unless a hook's state stands against it; publish `state` (and
        `stopped`) on a change."""
        if state != "stopped":
            self.claims_checked.discard(agent.id)  # running again (resumed): its next end is looked at
        current, by = self.rt.agents.state_of(agent.id)
        if not pane_may_set(current, by, state, told_not_drawn):
            if state == current == "stopped":
                self._after_session_end(agent)
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
        if state == "stopped":
            self.rt.publish("stopped", f"{agent.id} stopped (its session ended)", **common)
            self._give_back_claims(agent)

    def _after_session_end(self, agent: Agent) -> None:
        """The SessionEnd hook said `stopped` before the pane was gone: it gives the claims back itself,
        but a hook cut short may not have; look once per agent (the task script fails a claim once)."""
        if agent.id in self.claims_checked:
            return
        self.claims_checked.add(agent.id)
        self._give_back_claims(agent)

    def _give_back_claims(self, agent: Agent) -> None:
        """A stopped agent cannot finish what it holds: each claim fails this attempt at once, with why
        (back to ready while attempts remain), instead of waiting for `ib task reclaim`."""
        for task_id in self.rt.tasks.held_by(agent.id):
            reason = stopped_reason(agent.id)
            try:
                self.rt.tasks.fail(task_id, agent.id, reason)
            except Conflict as e:  # finished or released in between: nothing to give back
                log.info("agent %s: task %s not failed: %s", agent.id, task_id, e)
                continue
            log.info("agent %s: stopped holding task %s; attempt failed, claim released", agent.id, task_id)
