"""What the person reads about agents: the list, the tree, one agent's facts, its commits and diff."""

from __future__ import annotations

import json
import shlex
from collections.abc import Collection
from pathlib import Path

from bus.errors import Conflict
from bus.inbox.ages import format_age
from bus.stores import budget_store
from bus.stores.agent_store import Agent
from worker.agents import agent_inbox
from worker.agents.ownership import AgentRef, owned
from worker.runtime import Runtime
from worker.terminal_text import printable


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


def live_state(rt: Runtime, agent: Agent, sessions: Collection[str] | None = None) -> str:
    """`stopped` when the session is gone on this machine, else what the watcher or hooks last recorded.
    `sessions`: this machine's tmux sessions, listed once for many agents (`live_sessions`)."""
    if agent.worker == rt.worker_id:
        there = agent.session in sessions if sessions is not None else rt.tmux.has_session(agent.session)
        if not there:
            return "stopped"
    return agent.state


def live_sessions(rt: Runtime, agents: list[Agent]) -> set[str]:
    """This machine's tmux sessions, in one tmux call, for the live state of many agents (a call per agent
    made `ib list` and the MCP server's `list_agents` start a tmux process for each agent, or two)."""
    return set(rt.tmux.sessions()) if any(a.worker == rt.worker_id for a in agents) else set()


def state_text(rt: Runtime, agent: Agent, sessions: Collection[str] | None = None) -> str:
    """The live state with what the pane adds to a running one: `running (retrying · attempt 2/10)`."""
    return with_detail(live_state(rt, agent, sessions), agent.detail)


def with_detail(state: str, detail: str) -> str:
    """A running or stopped state with what the pane says of it. Pure."""
    return f"{state} ({detail})" if detail and state in ("running", "stopped") else state


def info_lines(rt: Runtime, agent: Agent) -> list[str]:
    held = budget_store.hold_of(rt.client, rt.keys, agent.id).get("reason")  # a budget, the watchdog
    return [
        f"id:        {agent.id}",
        f"state:     {state_text(rt, agent)}{' (paused)' if agent.paused else ''}",
        *([f"held:      {printable(held)}"] if held else []),
        f"role:      {agent.role}",
        f"cli:       {agent.cli}",
        f"mode:      {agent.permission_mode or '-'} (Claude Code's permission mode)",
        f"manager:   {agent.manager or '-'}",
        f"project:   {agent.project or '-'}",
        f"task:      {agent.task or '-'}",
        f"branch:    {agent.branch or '-'} (from {agent.base_branch or '-'})",
        f"worktree:  {agent.worktree or '-'}",
        f"session:   {agent.session} on {agent.worker}",
        f"messages:  {agent_inbox.path_of(rt, agent).line()}",
        *tmux_lines(rt.settings.tmux_socket, agent.session, elsewhere=agent.worker != rt.worker_id),
        f"age:       {format_age(agent.age)}",
        f"goal:      {printable(agent.goal.strip(), keep=chr(10))}",
    ]


def tmux_lines(socket: str | None, session: str, elsewhere: bool = False) -> list[str]:
    """Where the agent's terminal is and how a person attaches to it (Ctrl-b d leaves it running)."""
    where = " (on that worker's machine)" if elsewhere else ""
    return [
        f"tmux:      socket {socket or 'default'}{where}",
        f"attach:    {attach_command(socket, session)}",
    ]


def attach_command(socket: str | None, session: str) -> str:
    target = shlex.quote(session)
    return f"tmux -L {shlex.quote(socket)} attach -t {target}" if socket else f"tmux attach -t {target}"


def info_record(rt: Runtime, agent: Agent) -> dict[str, object]:
    """`ib info --json`: the agent's record, its live state, and where its terminal is."""
    record: dict[str, object] = json.loads(agent.to_json())
    return {
        **record,
        "state": live_state(rt, agent),  # what the pane shows now; the record's `detail` says more
        "messages": _messages_record(agent_inbox.path_of(rt, agent)),
        "tmux_socket": rt.settings.tmux_socket or "default",
        "attach": attach_command(rt.settings.tmux_socket, agent.session),
    }


def _messages_record(path: agent_inbox.MessagePath) -> dict[str, str]:
    """`ib info --json`'s `messages`: how other agents' messages reach the agent (`inbox` or `pane`)."""
    found = {"from_agents": path.way, "from_you": "pane"}
    return {**found, "inbox": path.inbox.socket} if path.inbox else {**found, "why": path.why}


def status_text(rt: Runtime, agent: AgentRef) -> str:
    from worker.agents.teardown import agent_repository
    from worker.git import agent_repo
    from worker.git.repo import Git

    agent = owned(rt, agent)
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


def diff_text(rt: Runtime, agent: AgentRef, stat: bool = False) -> str:
    from worker.agents.teardown import agent_repository
    from worker.git import agent_repo
    from worker.git.repo import Git

    agent = owned(rt, agent)
    if not agent.branch:
        raise Conflict(f"{agent.id} works without a worktree: there is no branch to diff")
    git = Git(Path(agent.root))
    repo = agent_repository(agent)
    agent_repo.publish(git, repo)
    there = Path(agent.worktree).is_dir() if agent.worktree else False
    if not git.branch_exists(agent.branch):
        return nothing_to_diff(agent.id, there, 0, branch_gone=agent.branch) + "\n"
    text = git.diff(agent.base_branch, agent.branch, stat=stat)
    if text.strip():
        return text
    changed = (repo.git if repo.exists() else git).status_short(Path(agent.worktree)) if there else ""
    return nothing_to_diff(agent.id, there, len(changed.splitlines())) + "\n"


def nothing_to_diff(agent_id: str, worktree_there: bool, changed: int, branch_gone: str = "") -> str:
    """The one line `ib diff` prints instead of an empty diff: why there is nothing, and where to look."""
    if branch_gone:
        what = (
            f"its branch {branch_gone} is gone"
            if worktree_there
            else f"its branch {branch_gone} and worktree are gone"
        )
        return f"{agent_id}: nothing to diff: {what}"
    if not worktree_there:
        return f"{agent_id}: no commits; its worktree is gone, so no uncommitted changes either"
    if changed:
        return f"{agent_id}: no commits yet; {changed} file(s) changed — `ib status {agent_id}`"
    return f"{agent_id}: no commits yet and no changes"
