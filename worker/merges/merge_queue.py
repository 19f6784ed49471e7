"""The worker's side of the merge queue: ask for an agent's branch to be merged (recording the files and
lines it changes, which bus.tasks.merge_order reads), and run a project's queue in merge order — rebase onto
the target, merge commit, tear the agent down — for the requests whose agent this worker owns. A conflict or a
failure leaves the repository and the agent as they were.
"""

from __future__ import annotations

import logging
from pathlib import Path

from bus.errors import BusError, Conflict
from bus.stores.agent_store import Agent
from bus.tasks.merge_request import MergeRequest
from bus.tasks.merges import MergeStore
from worker.agents import agent_log
from worker.agents.layout import AgentPaths
from worker.agents.teardown import agent_repository, teardown
from worker.errors import WorkerError
from worker.git import agent_repo, landing
from worker.git.parse import ChangeSize
from worker.git.repo import Git
from worker.merges.land import land
from worker.runtime import Runtime

log = logging.getLogger(__name__)


class MergeQueue:
    def __init__(self, rt: Runtime) -> None:
        self.rt = rt
        self.store = MergeStore(rt.client, rt.keys, rt.settings.events_maxlen, rt.settings.write_wait)

    def request(self, agent_id: str, task: str | None = None, into: str | None = None) -> MergeRequest:
        """Queue the agent's branch for merging into `into` (default: the branch it was made from). A request
        for an agent already waiting in the queue is that request, not a second one."""
        agent = self.rt.agents.get(agent_id)
        if not agent.branch:
            raise Conflict(f"{agent.id} works without a worktree: there is no branch to merge")
        project = agent.project or Path(agent.root).name
        existing = self.store.open_for(project, agent.id)
        if existing is not None:
            return existing
        target = into or agent.base_branch
        change = self._change(agent, target)
        return self.store.enqueue(
            project=project,
            agent=agent.id,
            branch=agent.branch,
            target=target,
            worker=agent.worker,
            task=task or agent.task,
            title=(agent.goal.strip().splitlines() or [agent.id])[0][:72],
            size=change.lines,
            changed=change.files,
        )

    def _change(self, agent: Agent, target: str) -> ChangeSize:
        """What the agent's branch changes since it left `target`; nothing known (it then keeps its place in
        the queue) when git cannot say, as the merge itself will tell what is wrong."""
        root = Git(Path(agent.root))
        try:
            agent_repo.publish(root, agent_repository(agent))
            return root.change_size(target, agent.branch)
        except WorkerError as e:
            log.info("merge request of %s: its change is unknown (%s); it keeps its place", agent.id, e)
            return ChangeSize()

    def process(self, project: str) -> list[MergeRequest]:
        """Merge the project's queue from its head (bus.tasks.merge_order) while the head's agent is this
        worker's; returns what was finished. Another worker's request at the head waits for that worker."""
        finished = []
        while (head := self.store.head(project)) is not None and head.request.worker == self.rt.worker_id:
            req = head.request
            if head.reason and req.status == "queued":
                log.info("merge %s of %s (%s) goes %s", req.id, req.agent, project, head.reason)
            result = self._run(req)
            self.store.finish(result)
            finished.append(result)
        return finished

    def process_all(self) -> list[MergeRequest]:
        """Every project's queue: on start, a merge cut short by a restart is first finished or undone in
        the checkout it was moving (and said so), then runs again."""
        self.recover()
        return [req for project in self.store.projects() for req in self.process(project)]

    def recover(self) -> list[landing.Recovery]:
        """Finish or undo the merges a crash cut short in the checkouts of this worker's repositories; each
        is logged and told with its request's result event (`recovered`)."""
        found = []
        for git in self._repositories():
            for checkout in git.worktrees():
                if checkout.bare or checkout.prunable is not None:
                    continue
                try:
                    done = landing.recover(git, checkout.path)
                except WorkerError as e:
                    log.warning(
                        "worker %s: an interrupted merge in %s waits: %s", self.rt.worker_id, checkout.path, e
                    )
                    continue
                if done is not None:
                    found.append(done)
                    self._note(done)
        return found

    def _repositories(self) -> list[Git]:
        """The person's repositories of this worker's agents, and the agents' own (a manager's branch is a
        target too)."""
        mine = [a for a in self.rt.agents.of_worker(self.rt.worker_id) if a.root]
        found = {Path(a.root).resolve(): Git(Path(a.root)) for a in mine}
        for agent in mine:
            own = agent_repository(agent)
            if own.exists():
                found[own.git_dir.resolve()] = own.git
        return list(found.values())

    def _note(self, done: landing.Recovery) -> None:
        log.warning("worker %s: %s", self.rt.worker_id, done.line)
        for project in self.store.projects():
            for req in self.store.queue(project):
                if req.branch == done.journal.branch and req.target == done.journal.target:
                    self.store.mark(req, recovered=done.line)

    def _run(self, req: MergeRequest) -> MergeRequest:
        if req.status == "merged":  # merged before a restart cut the teardown short
            self._remove(req)
            return req
        agent = self.rt.agents.find(req.agent)
        if agent is None or not agent.worktree:
            return req.replace(status="failed", error=f"agent {req.agent} is gone; nothing was merged")
        req = self.store.mark(req, status="merging")
        paths = AgentPaths(Path(agent.root), agent.id)
        try:
            rebased, result = land(self.rt, agent, req.target, f"Merge {req.branch}: {req.title}")
        except (WorkerError, BusError) as e:
            agent_log.append(paths.log, f"Merge into {req.target} failed: {e}")
            return req.replace(status="failed", error=str(e))
        if result is None or not result.ok:
            conflicts = rebased.conflicts if result is None else result.conflicts
            agent_log.append(paths.log, f"Merge into {req.target} conflicts: {', '.join(conflicts)}")
            return req.replace(status="conflict", files=tuple(conflicts))
        agent_log.append(paths.log, f"Agent merged into {req.target} ({len(result.commits)} commits)")
        req = self.store.mark(req, status="merged", sha=result.sha or "", commits=len(result.commits))
        self._remove(req)
        return req

    def _remove(self, req: MergeRequest) -> None:
        """After a merge the agent's worktree, branch, session and record go (its archive stays)."""
        agent = self.rt.agents.find(req.agent)
        if agent is not None:
            teardown(self.rt, agent, graceful=True, why=f"merged into {req.target}; ittybus ended it")
