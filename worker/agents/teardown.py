"""Ending agents: kill (without merging), the archive kept under `.ib/archive/`, and nuke of a tree or all.

Teardown order (the seed's): log every step, archive (so the archive holds the complete log), then remove
the agent's folder, its own repository and work tree, its branch, and its record on the bus.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import time
from collections.abc import Callable
from pathlib import Path

from bus.errors import UnmergedWork
from bus.poll import wait_until
from bus.stores.agent_store import Agent
from bus.stores.limit_store import LimitStore
from worker.agents import agent_log
from worker.agents.layout import AgentPaths, archive_root
from worker.agents.ownership import AgentRef, NotOwner, owned
from worker.errors import SessionGone
from worker.git import agent_repo
from worker.git.agent_repo import AgentRepo
from worker.git.repo import Git
from worker.runtime import Runtime

GRACE_SECONDS = 2.0


def kill(rt: Runtime, agent: AgentRef, force: bool = False, why: str = "ib kill ended it") -> Agent:
    """Stop an agent without merging. Unmerged work is refused unless `force`; `why` goes into its
    `stopped` event."""
    agent = owned(rt, agent)
    if not force:
        _refuse_unmerged(agent)
    agent_log.append(_paths(agent).log, "Agent killed")
    teardown(rt, agent, graceful=not force, why=why)
    rt.publish("killed", f"{agent.id} killed", **agent.event_fields())
    return agent


def _refuse_unmerged(agent: Agent) -> None:
    if not agent.worktree or not Path(agent.worktree).is_dir():
        return
    git = Git(Path(agent.root))
    repo = agent_repository(agent)
    own = repo.git if repo.exists() else git  # an agent of an older ittybus has a linked worktree
    dirty = own.status_short(Path(agent.worktree)).strip()
    agent_repo.publish(git, repo)
    ahead = git.ahead(agent.branch, agent.base_branch) if agent.branch else []
    if dirty or ahead:
        changed = len(dirty.splitlines())
        what = ", ".join(
            p
            for p in (
                f"{len(ahead)} unmerged commit(s)" if ahead else "",
                f"uncommitted changes ({changed} file{'s' if changed != 1 else ''})" if dirty else "",
            )
            if p
        )
        raise UnmergedWork(
            f"{agent.id} has {what}; merge it (ib merge {agent.id}) "
            f"or throw it away (ib kill --force {agent.id})"
        )


def teardown(rt: Runtime, agent: Agent, graceful: bool = True, why: str = "ib kill ended it") -> Path:
    """Stop the session, archive, remove worktree, branch, folder and record. Returns the archive folder.
    `why` is recorded first, so the `stopped` event the ending session raises says ittybus ended it."""
    paths = _paths(agent)
    rt.agents.update(agent.id, ending=why)
    scrollback = _stop_session(rt, agent, paths, graceful)
    git = Git(Path(agent.root))
    repo = agent_repository(agent)
    if repo.exists():
        _quietly(lambda: agent_repo.remove(repo), paths, "remove its repository")
    elif agent.worktree:
        _quietly(lambda: git.remove_worktree(Path(agent.worktree), force=True), paths, "remove worktree")
    if agent.branch and git.branch_exists(agent.branch):
        _quietly(lambda: git.delete_branch(agent.branch, force=True), paths, "delete branch")
        agent_log.append(paths.log, f"Deleted branch {agent.branch}")
    archive = _archive(agent, paths, scrollback)
    shutil.rmtree(paths.folder, ignore_errors=True)
    rt.questions.forget_agent(agent.id)
    LimitStore(rt.client, rt.keys).forget_agent(agent.id)
    rt.agents.remove(agent.id)
    return archive


def _stop_session(rt: Runtime, agent: Agent, paths: AgentPaths, graceful: bool) -> str:
    if not rt.tmux.has_session(agent.session):
        return ""
    scrollback = ""
    try:
        scrollback = rt.tmux.capture(agent.session, history=True)
        pid = rt.tmux.pane_pid(agent.session)
        if graceful:
            _terminate(pid)
            agent_log.append(paths.log, "Terminated agent process")
        rt.tmux.kill_session(agent.session)
        agent_log.append(paths.log, "Killed tmux session")
        if not graceful:  # hung up by the session's end: gone before the kill returns (it may write on exit)
            _end(pid)
    except SessionGone:
        pass
    return scrollback


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def _terminate(pane_pid: int | None) -> None:
    """SIGTERM the pane's process (the agent: start.sh execs it), wait a little, then SIGKILL."""
    if pane_pid is None:
        return
    try:
        os.kill(pane_pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    _end(pane_pid)


def _end(pid: int | None) -> None:
    """Wait a little for a process told to stop to be gone, then SIGKILL it."""
    if pid is None or wait_until(lambda: _gone(pid), GRACE_SECONDS):
        return
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)


def _archive(agent: Agent, paths: AgentPaths, scrollback: str) -> Path:
    stamp = time.strftime("%Y%m%d-%H%M%S")
    folder = archive_root(Path(agent.root)) / f"{stamp}-{agent.id}"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "output.log").write_text(scrollback, encoding="utf-8")
    (folder / "meta.json").write_text(
        json.dumps(json.loads(agent.to_json()), indent=2) + "\n", encoding="utf-8"
    )
    for name in ("agent.log", "settings.json", "prompt.txt"):
        source = paths.folder / name
        if source.exists():
            shutil.copy2(source, folder / name)
    return folder


def nuke(rt: Runtime, agent_id: str | None, tree: bool = True) -> list[str]:
    """Kill (forced) an agent and all its descendants (`tree`), deepest first; or every agent of this
    repository on this machine. Agents of other workers are theirs to kill (`ib nuke` reaches them)."""
    if agent_id is not None:
        top = owned(rt, agent_id)
        doomed = [*rt.agents.descendants(agent_id), top] if tree else [top]
        foreign = [a.id for a in doomed if a.worker != rt.worker_id]
        if foreign:
            raise NotOwner(
                f"{', '.join(foreign)} below {top.id} run on other workers; nothing was killed: "
                f"`ib nuke {top.id}` reaches every worker"
            )
    else:
        root = str(rt.root)
        everyone = [a for a in rt.agents.of_worker(rt.worker_id) if a.root == root]
        doomed = sorted(everyone, key=lambda a: -_depth(a, {x.id: x for x in everyone}))
    for agent in doomed:
        agent_log.append(_paths(agent).log, "Agent nuked")
        teardown(rt, agent, graceful=False, why="ib nuke ended it")
        rt.publish("killed", f"{agent.id} nuked", data={"nuke": True}, **agent.event_fields())
    return [a.id for a in doomed]


def _depth(agent: Agent, by_id: dict[str, Agent]) -> int:
    depth = 0
    seen = {agent.id}
    while agent.manager and agent.manager in by_id and agent.manager not in seen:
        agent = by_id[agent.manager]
        seen.add(agent.id)
        depth += 1
    return depth


def agent_repository(agent: Agent) -> AgentRepo:
    """Where the agent's own repository and work tree are (they exist for an agent with a branch)."""
    paths = _paths(agent)
    return AgentRepo(paths.worktree, paths.git_dir, agent.branch)


def _paths(agent: Agent) -> AgentPaths:
    return AgentPaths(Path(agent.root), agent.id)


def _quietly(step: Callable[[], object], paths: AgentPaths, what: str) -> None:
    try:
        step()
    except Exception as e:  # teardown goes on; the failure is logged
        agent_log.append(paths.log, f"teardown: could not {what}: {e}")
