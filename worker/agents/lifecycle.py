"""Pausing an agent (interrupt it, leave it be) and resuming it (continue, or restart a stopped session)."""

from __future__ import annotations

import shlex
from pathlib import Path

from bus.agents import Agent
from bus.errors import Conflict
from worker.agents import agent_log
from worker.agents.layout import AgentPaths
from worker.agents.spawn import start_script
from worker.agents.talk import press, send
from worker.service.runtime import Runtime

CONTINUE = "Continue where you left off."


def pause(rt: Runtime, agent_id: str) -> Agent:
    agent = rt.agents.get(agent_id)
    if agent.paused:
        raise Conflict(f"{agent.id} is already paused; ib resume {agent.id} to go on")
    press(rt, agent.id, "Escape")
    rt.agents.update(agent.id, paused=True)
    agent_log.append(AgentPaths(Path(agent.root), agent.id).log, "Agent paused")
    return rt.agents.get(agent.id)


def resume(rt: Runtime, agent_id: str) -> Agent:
    """A paused agent is told to continue; a stopped one gets its session back (`--resume`)."""
    agent = rt.agents.get(agent_id)
    paths = AgentPaths(Path(agent.root), agent.id)
    if _session_alive(rt, agent):
        if not agent.paused:
            raise Conflict(f"{agent.id} is running and not paused; nothing to resume")
        rt.agents.update(agent.id, paused=False)
        send(rt, agent.id, CONTINUE)
    else:
        if rt.tmux.has_session(agent.session):  # the pane is dead (remain-on-exit): make room
            rt.tmux.kill_session(agent.session)
        script = start_script(rt, agent, paths).replace(
            f"--session-id {shlex.quote(agent.claude_session)}",
            f"--resume {shlex.quote(agent.claude_session)}",
        )
        paths.start_script.write_text(_without_prompt(script, paths), encoding="utf-8")
        cwd = agent.worktree if agent.worktree and Path(agent.worktree).is_dir() else agent.root
        rt.tmux.new_session(
            agent.session, cwd, f"sh {shlex.quote(str(paths.start_script))}", {}, remain_on_exit=True
        )
        rt.agents.update(agent.id, paused=False, state="creating")
    agent_log.append(paths.log, "Agent resumed")
    return rt.agents.get(agent.id)


def _session_alive(rt: Runtime, agent: Agent) -> bool:
    for pane in rt.tmux.panes():
        if pane.session == agent.session:
            return not pane.dead
    return False


def _without_prompt(script: str, paths: AgentPaths) -> str:
    """A resumed conversation needs no new prompt."""
    return script.replace(f' "$(cat {shlex.quote(str(paths.prompt))})"', "")
