"""The pane watcher: once a tick, one `tmux list-panes` for all agents; capture only panes that printed.

The safety net behind the hooks: it reads each agent's pane with the pure parser and publishes `state`
changes and `stopped`. Idle agents cost nothing but their line in `list-panes`. A state a hook decided is
left alone unless the pane shows stronger evidence (worker/tmux/state_authority.py). A turn's end (complete,
waiting, error) is the hooks' event to raise: the pane only moves the state.

Auto mode's dialogs are told by no hook (Claude Code 2.1.332 runs neither PermissionRequest nor a
Notification for them until 6 s later), so an agent in auto mode is watched closely while its turn runs:
its pane alone is read every `CLOSE_INTERVAL` (one `capture-pane`, about 3 ms of CPU), from the `state`
event that says it runs (the UserPromptSubmit hook's) until its turn ends (a hook's event) or it reads
idle after `CLOSE_GRACE` (right after the prompt, the pane still shows the idle input box for a moment).
Its dialogs are watched too, since the answer to auto mode's notice brings its approval dialog at once;
but while a dialog it read waits unanswered, a close look only asks the bus whether it was answered.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field

from bus.errors import Conflict
from bus.stores.agent_store import Agent
from worker.errors import SessionGone
from worker.markers import FROM_PANE
from worker.programs.hook_outcome import stopped_reason
from worker.programs.registry import program_of
from worker.runtime import Runtime
from worker.service.dialog_events import tell_dialog
from worker.service.limit_watch import forget_gone_line, park_from_pane
from worker.tmux.dialogs import DRAW_WAIT, Dialog
from worker.tmux.pane_death import Death
from worker.tmux.pane_state import PaneState
from worker.tmux.parse import PaneInfo, needs_capture
from worker.tmux.retry import retry_detail
from worker.tmux.state_authority import ended_not_drawn, pane_may_set

log = logging.getLogger(__name__)

CLOSE_INTERVAL = 0.1  # seconds between two looks at a running auto-mode agent's pane
CLOSE_MODES = frozenset({"auto"})  # permission modes whose dialogs no hook tells
CLOSE_GRACE = 3.0  # seconds a close watch lasts however idle the pane reads
CLOSE_ENDS = frozenset({"stopped"})  # states that end a close watch at once
# seconds a permission dialog on the pane waits for the hook that tells it with the call it asks about (a
# cold `ib hook` on a busy machine is slower than the pane watcher's next look), before the pane tells it
HOOK_GRACE = 3.0
# seconds a folder-trust dialog is left on screen before it is told or answered: Claude Code draws it before
# it reads keys and drops what comes in between (a second or more on a busy machine), and a carried trust
# answered at first sight was lost and answered again 15 s later
TRUST_SETTLE = 2.0


def not_started(agent: Agent, listed: bool) -> bool:
    """Whether an agent whose pane is missing has not started yet: `spawn` records it (`creating`)
    before it opens its tmux session, so a tick in between finds no pane. Its pane never seen listed
    (`listed`), it never ran: no `stopped` for it. Pure."""
    return agent.state == "creating" and not listed


def watched_closely(agent: Agent, state: str) -> bool:
    """Whether `agent`, now in `state`, may draw a dialog no hook tells: its turn runs, or shows a
    dialog whose answer may bring the next one at once (auto mode asks twice). Pure."""
    return state in ("running", "permission") and agent.permission_mode in CLOSE_MODES


@dataclass
class PaneWatcher:
    rt: Runtime
    captured_at: dict[str, float] = field(default_factory=dict)
    claims_checked: set[str] = field(default_factory=set)  # stopped agents whose claims were looked at
    close: dict[str, Agent] = field(default_factory=dict)  # agents watched closely (`watched_closely`)
    close_since: dict[str, float] = field(default_factory=dict)  # agent → when its close watch began
    asking: dict[str, str] = field(default_factory=dict)  # agent → prompt of the dialog its pane showed
    drawn: dict[str, str] = field(default_factory=dict)  # agent → its hook's dialog (prompt id) seen drawn
    listed: set[str] = field(default_factory=set)  # agents whose pane a `list-panes` showed
    held: dict[str, float] = field(default_factory=dict)  # agent → since when its dialog is held back
    records: dict[str, Agent] = field(default_factory=dict)  # this worker's agents as the last tick read them

    def tick(self, agents: list[Agent] | None = None) -> None:
        """One look at this worker's agents (`agents`: as the worker read them for this tick, else read)."""
        agents = self.rt.agents.of_worker(self.rt.worker_id) if agents is None else agents
        mine = {a.id for a in agents}
        self.records = {a.id: a for a in agents}
        for agent_id in [i for i in self.close if i not in mine]:
            self.unwatch(agent_id)
        self.forget_all_but(mine)
        for agent in agents:
            if watched_closely(agent, agent.state):
                self._watch(agent)
            else:
                self._idle(agent.id, agent.state)
        if not agents:
            return
        panes = {p.session: p for p in self.rt.tmux.panes()}
        for agent in agents:
            pane = panes.get(agent.session)
            if pane is not None:
                self.listed.add(agent.id)
            self._look(agent, pane)

    def moved(self, agent_id: str, state: str) -> None:
        """An agent's state changed (a `state` event): it is watched closely from now, or no more."""
        if state not in ("running", "permission"):
            self._idle(agent_id, state)
            return
        if state == "running":
            self.asking.pop(agent_id, None)  # whatever dialog it showed is behind it
        if agent_id in self.close:
            return
        # the record as the last tick read it (its mode changes rarely; a change is seen at the next tick)
        agent = self.records.get(agent_id) or self.rt.agents.find(agent_id)
        if agent is not None and agent.worker == self.rt.worker_id and watched_closely(agent, state):
            self._watch(agent)

    def unwatch(self, agent_id: str) -> None:
        """The agent's turn ended (a hook said so), or it is gone: no close watch."""
        self.close.pop(agent_id, None)
        self.close_since.pop(agent_id, None)
        self.asking.pop(agent_id, None)

    def look_closely(self) -> None:
        """One look at each pane watched closely, but for dialogs still waiting for their answer."""
        for agent in list(self.close.values()):
            prompt = self.asking.get(agent.id)
            if prompt and not self.rt.prompts.answered(prompt):
                continue
            self._read(agent)

    def _watch(self, agent: Agent) -> None:
        self.close[agent.id] = agent
        self.close_since.setdefault(agent.id, time.monotonic())

    def _idle(self, agent_id: str, state: str) -> None:
        """The agent reads `state`, not running: the end of its close watch, unless that began just now."""
        since = self.close_since.get(agent_id)
        if since is not None and (state in CLOSE_ENDS or time.monotonic() - since >= CLOSE_GRACE):
            self.unwatch(agent_id)

    def _look(self, agent: Agent, pane: PaneInfo | None) -> None:
        if pane is None and not_started(agent, agent.id in self.listed):
            return  # spawned but its session not opened yet: no `stopped` before its `spawned`
        if pane is None or pane.dead:
            self.record(agent, PaneState.STOPPED.value, self._death(agent) if pane is not None else None)
            return
        quiet = pane.activity is not None and not needs_capture(pane.activity, self.captured_at.get(agent.id))
        settled = agent.state not in ("creating", "unknown", "unreachable") and agent.id not in self.held
        if quiet and settled and not self._answered(agent):
            return  # nothing printed since we last looked
        self._read(agent)

    def _wait_for_hook(self, agent: Agent, dialog: Dialog, holding: list[Dialog]) -> bool:
        """Whether a permission dialog no hook told yet waits for the program's hook to tell it (HOOK_GRACE
        from when the pane first showed it; it is looked at again meanwhile, quiet pane or not): only where
        that hook runs — the agent's hooks report (they named its transcript), and not in a mode whose
        dialogs no hook tells (CLOSE_MODES)."""
        if dialog.kind != "permission" or not program_of(agent).permission_hook:
            return False
        if not agent.transcript_path or agent.permission_mode in CLOSE_MODES:
            return False
        return self._held_for(agent, dialog, holding, HOOK_GRACE)

    def _settling(self, agent: Agent, dialog: Dialog, holding: list[Dialog]) -> bool:
        """Whether a folder-trust dialog was drawn less than TRUST_SETTLE ago (from when the pane first
        showed it; it is looked at again meanwhile, quiet pane or not)."""
        return dialog.kind == "trust" and self._held_for(agent, dialog, holding, TRUST_SETTLE)

    def _held_for(self, agent: Agent, dialog: Dialog, holding: list[Dialog], grace: float) -> bool:
        """Whether the dialog, on the pane since the first look that held it, is held `grace` seconds yet
        (noted in `holding`, so the look keeps it held)."""
        since = self.held.setdefault(agent.id, time.monotonic())
        if time.monotonic() - since >= grace:
            return False
        holding.append(dialog)
        return True

    def _answered(self, agent: Agent) -> bool:
        """Whether the dialog the agent showed was answered and the watcher has not seen it close: keys the
        program dropped leave its screen quiet, and a look past STILL_CLOSING tells the dialog again (or
        answers a carried folder trust again)."""
        if agent.state != "permission":
            return False
        prompt = self.rt.prompts.get(agent.id)
        return prompt is not None and self.rt.prompts.answered(prompt.id)

    def _read(self, agent: Agent) -> None:
        try:
            now = time.time()
            text = self.rt.tmux.capture(agent.session)
        except SessionGone:
            self.record(agent, PaneState.STOPPED.value)
            return
        self.captured_at[agent.id] = now
        forget_gone_line(self.rt, agent, text)
        state = program_of(agent).pane_state(text).value
        self.asking.pop(agent.id, None)
        holding: list[Dialog] = []

        def hold(shown: Dialog) -> bool:
            return self._wait_for_hook(agent, shown, holding) or self._settling(agent, shown, holding)

        dialog = tell_dialog(self.rt, agent, text, hold)
        if not holding:
            self.held.pop(agent.id, None)
        if dialog is not None:
            state = "permission"  # a dialog waits for a person, whatever else the screen shows
            prompt = self.rt.prompts.get(agent.id) if agent.id in self.close else None
            if prompt is not None:
                self.asking[agent.id] = prompt.id
        if state == PaneState.RATE_LIMITED.value and self._limited(agent, text):
            return
        self.record(agent, state, told_not_drawn=self._told_not_drawn(agent, dialog is not None))
        self._note_retry(agent, text, state)

    def _limited(self, agent: Agent, text: str) -> bool:
        """A usage limit on screen of an agent whose hooks tell nothing of it: it is parked on it, or stays
        as it is (parked already, or this limit is behind it); True when the watcher records nothing more.
        An agent whose program has a limit hook (Claude Code's StopFailure), and whose hooks work, is left
        to that hook, which tells the limit exactly; Codex and Gemini CLI tell it only on screen."""
        if program_of(agent).limit_hook and self.rt.agents.state_of(agent.id)[1] == "hook":
            return False
        return park_from_pane(self.rt, agent, text) or agent.state == "limited" or bool(agent.limit_line)

    def forget_all_but(self, mine: set[str]) -> None:
        """Drops what was noted of agents that are no longer this worker's (torn down, or moved)."""
        for noted in (self.captured_at, self.drawn, self.asking, self.held):
            for agent_id in [i for i in noted if i not in mine]:
                del noted[agent_id]
        self.listed &= mine

    def _told_not_drawn(self, agent: Agent, drawn: bool) -> bool:
        """Whether a hook told of a dialog that Claude Code has not drawn yet: it runs the PermissionRequest
        hook before drawing, and a busy machine draws late; meanwhile the screen still shows the turn."""
        if agent.state != "permission":
            return False
        prompt = self.rt.prompts.get(agent.id)
        if prompt is None or prompt.tool == FROM_PANE or self.rt.prompts.answered(prompt.id):
            return False
        if drawn:
            self.drawn[agent.id] = prompt.id
        return self.drawn.get(agent.id) != prompt.id and time.time() - prompt.at < DRAW_WAIT

    def _note_retry(self, agent: Agent, text: str, state: str) -> None:
        """While Claude Code retries an API call its turn goes on: the retry is the agent's detail
        (`ib list`, `ib info`), not an `error` event."""
        detail = retry_detail(text) if state == "running" else ""
        if detail != agent.detail:
            self.rt.agents.update(agent.id, detail=detail)

    def _death(self, agent: Agent) -> Death | None:
        """How the agent's program ended, read once: when the pane died, not on every later tick."""
        if agent.state == "stopped":
            return None
        try:
            return self.rt.tmux.death(agent.session)
        except SessionGone:
            return None

    def record(
        self, agent: Agent, state: str, death: Death | None = None, told_not_drawn: bool = False
    ) -> None:
        """Store a state the watcher saw, unless a hook's state stands against it; publish `state` (and
        `stopped`, with how the program ended when the pane is still there to tell) on a change."""
        if state != "stopped":
            self.claims_checked.discard(agent.id)  # running again (resumed): its next end is looked at
        current, by, since = self.rt.agents.state_of(agent.id)
        told_not_drawn = told_not_drawn or ended_not_drawn(current, by, since, time.time())
        if not pane_may_set(current, by, state, told_not_drawn):
            if state == current == "stopped":
                self._after_session_end(agent)
            return
        if current == state:
            return
        common = {"sender": agent.id, **agent.event_fields()}
        told = f"{agent.id}: {current} → {state}"
        moved = {"from_state": current, "to_state": state}
        if self.rt.publish_move(agent.id, current, state, told, data=moved, **common) is None:
            return  # moved by another writer since it was read (a hook): the next look sees what it holds
        if not watched_closely(agent, state):
            self._idle(agent.id, state)
        log.info("agent %s: %s -> %s", agent.id, current, state)
        if state == "stopped":
            message, data = self._stopped(agent, death)
            self.rt.publish("stopped", message, data=data, **common)
            self._give_back_claims(agent)

    def _stopped(self, agent: Agent, death: Death | None) -> tuple[str, dict[str, object]]:
        """The `stopped` event's words: ittybus's own teardown says so; a program that ended by itself
        says how, with what it printed last (also kept as the agent's detail for `ib list`)."""
        ending = self.rt.agents.ending_of(agent.id)
        if ending:
            return f"{agent.id} stopped: {ending}", {"ending": ending}
        if death is None:
            return f"{agent.id} stopped (its session ended)", {}
        self.rt.agents.update(agent.id, detail=death.summary)
        return death.message(agent.id), death.data()

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
