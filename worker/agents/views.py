"""What the person reads about agents: the list, the tree, one agent's facts, its commits and diff."""

from __future__ import annotations

import shlex
from pathlib import Path

from bus.agents import Agent
from bus.errors import Conflict
from worker.agents.ownership import owned
from worker.agents.teardown import agent_repository
from worker.frontends.status_block import format_age
from worker.git import agent_repo
from worker.git.repo import Git
from worker.service.runtime import Runtime
from worker.terminal_text import printable

__all__ = ["format_age"]  # the CLI shows ages the way the status block does


def first_line(text: str, width: int) -> str:
    return printable(text.strip().splitlines()[0][:width]) if text.strip() else ""


def tree_lines(agents: list[Agent]) -> list[str]:
    """Managers with their workers indented below them. Pure."""
    by_id = {a.id: a for a in agents}
    kids: dict[str, list[Agent]] = {}
    for a in agents:
        kids.setdefault(a.manager if a.manager in by_id else "", []).append(a)
    lines: list[str] = []

    def walk(parent: str, prefix: str) -> None:
        children = kids.get(parent, [])
        for i, a in enumerate(children):
            last = i == len(children) - 1
            branch = "" if parent == "" else ("└─ " if last else "├─ ")
            lines.append(f"{prefix}{branch}{a.id} [{a.state}] {format_age(a.age)} {first_line(a.goal, 60)}")
            walk(a.id, prefix + ("" if parent == "" else ("   " if last else "│  ")))

    walk("", "")
    return lines


def live_state(rt: Runtime, agent: Agent) -> str:
    """`stopped` when the session is gone on this machine, else what the watcher or hooks last recorded."""
    if agent.worker == rt.worker_id and not rt.tmux.has_session(agent.session):
        return "stopped"
    return agent.state


def state_text(rt: Runtime, agent: Agent) -> str:
    """The live state with what the pane adds to a running one: `running (retrying · attempt 2/10)`."""
    state = live_state(rt, agent)
    return f"{state} ({agent.detail})" if agent.detail and state == "running" else state


def info_lines(rt: Runtime, agent: Agent) -> list[str]:
    return [
        f"id:        {agent.id}",
        f"state:     {state_text(rt, agent)}{' (paused)' if agent.paused else ''}",
        f"role:      {agent.role}",
        f"mode:      {agent.permission_mode or '-'} (Claude Code's permission mode)",
        f"manager:   {agent.manager or '-'}",
        f"project:   {agent.project or '-'}",
        f"task:      {agent.task or '-'}",
        f"branch:    {agent.branch or '-'} (from {agent.base_branch or '-'})",
        f"worktree:  {agent.worktree or '-'}",
        f"session:   {agent.session} on {agent.worker}",
        *tmux_lines(rt.settings.tmux_socket, agent.session, elsewhere=agent.worker != rt.worker_id),
        f"age:       {format_age(agent.age)}",
        f"goal:      {printable(agent.goal.strip(), keep=chr(10))}",
    ]


def tmux_lines(socket: str | None, session: str, elsewhere: bool = False) -> list[str]:
    """Where the agent's terminal is and how a person attaches to it (Ctrl-b d leaves it running)."""
    target = shlex.quote(session)
    attach = f"tmux -L {shlex.quote(socket)} attach -t {target}" if socket else f"tmux attach -t {target}"
    where = " (on that worker's machine)" if elsewhere else ""
    return [f"tmux:      socket {socket or 'default'}{where}", f"attach:    {attach}"]


def status_text(rt: Runtime, agent_id: str) -> str:
    agent = owned(rt, agent_id)
    if not agent.branch:
        raise Conflict(f"{agent.id} works without a worktree: see `git status` in {agent.root}")
    git = Git(Path(agent.root))
    repo = agent_repository(agent)
    agent_repo.publish(git, repo)
    commits = git.ahead(agent.branch, agent.base_branch)
    lines = [f"{agent.id}: {len(commits)} commit(s) on {agent.branch} not on {agent.base_branch}"]
    lines += [f"  {c.sha[:7]} {c.subject}" for c in commits]
    changes = (
        (repo.git if repo.exists() else git).status_short(Path(agent.worktree)).rstrip()
        if Path(agent.worktree).is_dir()
        else "(worktree missing)"
    )
    lines.append("uncommitted changes:" if changes else "no uncommitted changes")
    lines += [f"  {line}" for line in changes.splitlines()]
    return "\n".join(lines)


def diff_text(rt: Runtime, agent_id: str, stat: bool = False) -> str:
    agent = owned(rt, agent_id)
    if not agent.branch:
        raise Conflict(f"{agent.id} works without a worktree: there is no branch to diff")
    git = Git(Path(agent.root))
    agent_repo.publish(git, agent_repository(agent))
    return git.diff(agent.base_branch, agent.branch, stat=stat)
