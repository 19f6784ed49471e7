"""`ib merge`: rebase the agent's branch onto the target in its own repository, merge it with a merge
commit where the target lives, tear the agent down.

A conflict leaves everything as it was (the rebase is aborted), keeps the agent, names the files and
publishes `merge_conflict`; success publishes `merged` and removes worktree, branch and session.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import NoReturn

from bus.errors import Conflict
from bus.stores.agent_store import Agent
from worker.agents import agent_log
from worker.agents.layout import AgentPaths
from worker.agents.ownership import AgentRef, owned
from worker.agents.teardown import agent_repository, teardown
from worker.errors import WorkerError
from worker.git import agent_repo
from worker.git.repo import Git, MergeResult, RebaseResult
from worker.runtime import Runtime


class MergeConflict(WorkerError):
    """The agent's branch does not merge cleanly; `files` are the conflicted paths."""

    def __init__(self, message: str, files: list[str]) -> None:
        super().__init__(message)
        self.files = files


@dataclass(frozen=True)
class Merged:
    agent: str
    target: str
    sha: str
    commits: int
    archive: str = ""
    files: list[str] = field(default_factory=list)


def merge(rt: Runtime, agent: AgentRef, into: str | None = None) -> Merged:
    agent = owned(rt, agent)
    target = into or agent.base_branch
    if not agent.branch:
        raise Conflict(f"{agent.id} works without a worktree (--no-worktree): there is no branch to merge")
    paths = AgentPaths(Path(agent.root), agent.id)
    rebased, result = land(rt, agent, target, f"Merge {agent.branch}: {agent.goal.splitlines()[0][:72]}")
    if result is None or not result.ok:
        _conflict(rt, agent, target, rebased.conflicts if result is None else result.conflicts, paths)
    sha = result.sha or ""
    agent_log.append(paths.log, f"Agent merged into {target} ({len(result.commits)} commits)")
    archive = teardown(rt, agent, graceful=True, why=f"merged into {target}; ittybus ended it")
    rt.publish(
        "merged",
        f"{agent.id} merged into {target} ({sha[:7]})",
        **agent.event_fields(),
        data={"branch": agent.branch, "target": target, "sha": sha, "commits": len(result.commits)},
    )
    return Merged(agent.id, target, sha, len(result.commits), str(archive))


def land(rt: Runtime, agent: Agent, target: str, message: str) -> tuple[RebaseResult, MergeResult | None]:
    """Rebase the agent's branch onto `target` in its own repository, then merge it with a merge commit
    where `target` lives: the person's repository, or the repository of the agent whose branch it is (a
    manager's). None for the merge when the rebase conflicts; either way a conflict changes nothing."""
    root = Git(Path(agent.root))
    own = agent_repository(agent)
    if not own.exists():  # an agent of an older ittybus: a linked worktree of the person's repository
        rebased = root.rebase(Path(agent.worktree), target)
        return rebased, root.merge_into(target, agent.branch, message) if rebased.ok else None
    agent_repo.publish(root, own)
    home, source = _home(rt, root, target)
    agent_repo.bring(own.git, source, target)
    rebased = own.git.rebase(own.worktree, target)
    agent_repo.publish(root, own)
    if not rebased.ok:
        return rebased, None
    if home is not root:
        agent_repo.bring(home, own.git_dir, agent.branch)
    result = home.merge_into(target, agent.branch, message)
    if home is not root and result.ok:
        agent_repo.bring(root, source, target)
    return rebased, result


def _home(rt: Runtime, root: Git, target: str) -> tuple[Git, Path]:
    """The repository where `target` is worked on, and the folder to fetch it from: the repository of this
    worker's agent whose branch it is, else the person's."""
    for other in rt.agents.of_worker(rt.worker_id):
        if other.branch == target and other.root == str(root.repo):
            repo = agent_repository(other)
            if repo.exists():
                return repo.git, repo.git_dir
    return root, root.repo


def _conflict(rt: Runtime, agent: Agent, target: str, files: list[str], paths: AgentPaths) -> NoReturn:
    agent_log.append(paths.log, f"Merge into {target} conflicts: {', '.join(files)}")
    rt.publish(
        "merge_conflict",
        f"merging {agent.branch} into {target} conflicts in {len(files)} file(s)",
        **agent.event_fields(),
        data={"branch": agent.branch, "target": target, "files": files},
    )
    listing = "\n".join(f"  - {name}" for name in files)
    raise MergeConflict(
        f"{agent.branch} does not merge cleanly into {target}; conflicted files:\n{listing}\n"
        f"Nothing was changed and {agent.id} keeps running: ask it to rebase onto {target} and resolve them.",
        files,
    )


def merge_check(rt: Runtime, agent: AgentRef, into: str | None = None) -> list[str]:
    """The files that would conflict if the agent were merged now ([] = clean). Changes nothing."""
    agent = owned(rt, agent)
    if not agent.branch:
        raise Conflict(f"{agent.id} works without a worktree: there is no branch to merge")
    target = into or agent.base_branch
    git = Git(Path(agent.root))
    agent_repo.publish(git, agent_repository(agent))
    done = git.run(
        "merge-tree", "--write-tree", "--name-only", "--no-messages", target, agent.branch, check=False
    )
    if done.returncode == 0:
        return []
    lines = done.stdout.splitlines()
    return [line for line in lines[1:] if line.strip()]
