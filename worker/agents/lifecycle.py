"""Pausing an agent (interrupt it, leave it be) and resuming it (continue, or restart a stopped session)."""

from __future__ import annotations

import re
import shlex
import uuid
from dataclasses import dataclass
from pathlib import Path

from bus.errors import Conflict
from bus.poll import wait_until
from bus.stores.agent_store import Agent
from worker.agents import agent_log
from worker.agents.layout import AgentPaths
from worker.agents.ownership import AgentRef, owned
from worker.agents.spawn import start_script
from worker.agents.talk import press, send
from worker.errors import WorkerError
from worker.runtime import Runtime

CONTINUE = "Continue where you left off."
START_WAIT = 15.0  # seconds a restarted agent has to show its program before we stop watching
DEAD_LOOKS = 10  # looks, 0.1 s apart, at a dead pane for the exit status tmux may not have written yet
_FAILED = "No conversation found"
_DEAD = re.compile(r"Pane is dead \(status (\d+)")
_STARTED = ("Claude Code v", "❯", "> ")


def pause(rt: Runtime, agent: AgentRef) -> Agent:
    agent = owned(rt, agent)
    if agent.paused:
        raise Conflict(f"{agent.id} is already paused; ib resume {agent.id} to go on")
    press(rt, agent.id, "Escape")
    rt.agents.update(agent.id, paused=True)
    agent_log.append(AgentPaths(Path(agent.root), agent.id).log, "Agent paused")
    return rt.agents.get(agent.id)


@dataclass(frozen=True)
class Resumed:
    agent: Agent
    how: str  # continued (was paused) | resumed (its conversation) | fresh (it never had one)

    @property
    def message(self) -> str:
        return {
            "continued": f"resumed {self.agent.id}",
            "resumed": f"resumed {self.agent.id} with its conversation",
            "fresh": f"{self.agent.id} had no conversation yet: started a fresh one with its prompt",
        }[self.how]


class ResumeFailed(WorkerError):
    """Claude Code did not take the conversation back; the message quotes what its pane said."""


def resume(rt: Runtime, agent: AgentRef) -> Resumed:
    """A paused agent is told to continue; a stopped one gets its session back (`--resume`), or a fresh
    one when its conversation never started (Claude Code keeps no transcript for it)."""
    agent = owned(rt, agent)
    paths = AgentPaths(Path(agent.root), agent.id)
    if _session_alive(rt, agent):
        if not agent.paused:
            raise Conflict(f"{agent.id} is running and not paused; nothing to resume")
        rt.agents.update(agent.id, paused=False)
        send(rt, agent.id, CONTINUE)
        how = "continued"
    else:
        how = "resumed" if _has_conversation(agent) else "fresh"
        _restart(rt, agent, paths, fresh=how == "fresh")
    agent_log.append(paths.log, f"Agent resumed ({how})")
    return Resumed(rt.agents.get(agent.id), how)


def _has_conversation(agent: Agent) -> bool:
    """Claude Code can resume only a conversation it wrote a transcript for."""
    return bool(agent.transcript_path) and Path(agent.transcript_path).is_file()


def _restart(rt: Runtime, agent: Agent, paths: AgentPaths, fresh: bool) -> None:
    if rt.tmux.has_session(agent.session):  # the pane is dead (remain-on-exit): make room
        rt.tmux.kill_session(agent.session)
    if fresh:
        agent = agent.replace(claude_session=str(uuid.uuid4()), transcript_path="")
        rt.agents.update(agent.id, claude_session=agent.claude_session, transcript_path="")
        script = start_script(rt, agent, paths)
    else:
        script = start_script(rt, agent, paths, resume=True)
    paths.start_script.write_text(script, encoding="utf-8")
    cwd = agent.worktree if agent.worktree and Path(agent.worktree).is_dir() else agent.root
    rt.tmux.new_session(
        agent.session, cwd, f"sh {shlex.quote(str(paths.start_script))}", {}, remain_on_exit=True
    )
    rt.agents.update(agent.id, paused=False, state="creating", state_by="", detail="", ending="")
    _check_started(rt, agent)


def _check_started(rt: Runtime, agent: Agent) -> None:
    """Watch the new pane until the program is up; a pane that died or says it found no conversation
    means the resume failed."""

    def failed(reason: str) -> ResumeFailed:
        rt.agents.update(agent.id, state="stopped", state_by="")
        return ResumeFailed(f"resuming {agent.id} failed: {reason} (see ib look {agent.id})")

    def started() -> bool:
        pane = next((p for p in rt.tmux.panes() if p.session == agent.session), None)
        if pane is None:
            raise failed("its session ended at once")
        # a dead pane's last lines may have scrolled above its screen: read them all, so the reason
        # given is Claude Code's own line whether or not the program had exited when we looked
        text = rt.tmux.capture(agent.session, history=pane.dead)
        failure = next((line.strip() for line in text.splitlines() if _FAILED in line), "")
        if failure or (pane.dead and _DEAD.search(text)):
            raise failed(_why(failure, text))
        if pane.dead:
            # tmux marks a pane dead a moment before it writes the exit status, and 3.3a often never
            # writes it (the pty's end seen before the child was reaped): look again a few times, then
            # say what we know
            dead_looks.append(text)
            if len(dead_looks) < DEAD_LOOKS:
                return False
            raise failed(_why("", text))
        return any(sign in text for sign in _STARTED)

    dead_looks: list[str] = []
    wait_until(started, START_WAIT, interval=0.1)  # pane text cannot push: a short poll


def _why(failure: str, text: str) -> str:
    """What the dead pane says: Claude Code's own line, else the exit status tmux noted, if it did."""
    found = _DEAD.search(text)
    return failure or "the agent program exited at once" + (f" (status {found[1]})" if found else "")


def _session_alive(rt: Runtime, agent: Agent) -> bool:
    for pane in rt.tmux.panes():
        if pane.session == agent.session:
            return not pane.dead
    return False
