"""One round of the conflict check: the agents whose files changed are snapshotted and merged in memory with
every other live agent of their repository on this machine and with their target branch; each overlap not told
yet (or changed since) becomes one `conflict_risk` event and a note for the agent that made the change.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from bus.stores.agent_store import Agent
from worker.agents.layout import AgentPaths
from worker.conflicts import overlap
from worker.conflicts.merge_tree import MergeOutcome, parse_hunks
from worker.conflicts.overlap import Collision
from worker.conflicts.snapshot import Busy, Scratch, Snapshot
from worker.errors import GitError
from worker.runtime import Runtime

log = logging.getLogger(__name__)

STALE = 30.0
"""Seconds after which an agent's snapshot is taken again when the watch is idle (`refresh_stalest`). A check
never waits for that: every edit through a tool refreshes its own agent's snapshot; this catches the rest
(a person's edit in the work tree)."""
PRUNE_EVERY = 600.0
MAX_HUNK_FILES = 10
NOTES_KEPT = 20
NOTE_TTL = 86400
MARK_TTL = 7 * 86400
ENDED = frozenset({"stopped"})


@dataclass
class _Side:
    agent: Agent
    snapshot: Snapshot
    taken: float


@dataclass
class ConflictCheck:
    rt: Runtime
    snapshots: dict[str, _Side] = field(default_factory=dict)
    scratches: dict[str, Scratch] = field(default_factory=dict)
    pruned: float = field(default_factory=time.monotonic)
    compared: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """Per agent, the commits of its last check: the same again (a Bash call that changed nothing) is
    skipped."""

    def run(self, changed: Iterable[str]) -> list[Collision]:
        """Check each agent in `changed` (ids in the order they asked; unknown, ended or foreign ones are
        skipped), the latest first: it made the second change, so it is the one told. What was told."""
        live = self._live()
        latest_first = list(dict.fromkeys(reversed(list(changed))))  # the change made last is the second one
        wanted = [live[a] for a in latest_first if a in live]
        for agent in wanted:  # every changed agent first: two edits in the same second see each other
            self._snap(agent, fresh=True)
        told: list[Collision] = []
        for agent in wanted:
            if agent.id in self.snapshots:
                told += self._check(
                    agent, [a for a in live.values() if a.id != agent.id and a.root == agent.root]
                )
        return told

    def _live(self) -> dict[str, Agent]:
        """This worker's agents with a repository of their own, not ended."""
        found = {}
        for agent in self.rt.agents.of_worker(self.rt.worker_id):
            if agent.state in ENDED or not agent.branch:
                continue
            if (AgentPaths(Path(agent.root), agent.id).git_dir / "HEAD").is_file():
                found[agent.id] = agent
        for gone in set(self.snapshots) - set(found):
            del self.snapshots[gone]
        for gone in set(self.compared) - set(found):
            del self.compared[gone]
        return found

    def _snap(self, agent: Agent, fresh: bool) -> Snapshot | None:
        kept = self.snapshots.get(agent.id)
        if kept is not None and not fresh:
            return kept.snapshot
        paths = AgentPaths(Path(agent.root), agent.id)
        scratch = self._scratch(agent.root)
        try:
            snap = scratch.snapshot(agent.id, paths.worktree, paths.git_dir)
        except Busy as e:
            log.info("conflict check: %s skipped: %s", agent.id, e)
            self.snapshots.pop(agent.id, None)
            return None
        except GitError as e:
            log.warning("conflict check: no snapshot of %s: %s", agent.id, e)
            self.snapshots.pop(agent.id, None)
            return None
        self.snapshots[agent.id] = _Side(agent, snap, time.monotonic())
        return snap

    def refresh_stalest(self) -> bool:
        """Take again the oldest snapshot older than STALE (one, so an idle moment stays short); True when one
        was due."""
        due = [side for side in self.snapshots.values() if time.monotonic() - side.taken >= STALE]
        if not due:
            return False
        self._snap(min(due, key=lambda side: side.taken).agent, fresh=True)
        return True

    def prune(self) -> bool:
        """Every PRUNE_EVERY seconds, the scratch repositories' old objects go; True when it was time."""
        if time.monotonic() - self.pruned < PRUNE_EVERY:
            return False
        self.pruned = time.monotonic()
        for scratch in self.scratches.values():
            scratch.prune()
        return True

    def _scratch(self, root: str) -> Scratch:
        scratch = self.scratches.get(root)
        if scratch is None:
            scratch = self.scratches[root] = Scratch(Path(root))
        scratch.ensure()
        return scratch

    def _check(self, agent: Agent, others: list[Agent]) -> list[Collision]:
        mine = self.snapshots[agent.id].snapshot
        scratch = self._scratch(agent.root)
        scratch.borrow([AgentPaths(Path(a.root), a.id).git_dir / "objects" for a in [agent, *others]])
        sides: list[tuple[str, str, str]] = []  # (other's name, "agent" | "branch", its commit)
        for other in others:
            snap = self._snap(other, fresh=False)
            if snap is not None:
                sides.append((other.id, "agent", snap.commit))
        tip = scratch.branch_tip(agent.base_branch) if agent.base_branch else None
        if tip is not None:
            sides.append((agent.base_branch, "branch", tip))
        signature = (mine.commit, *(f"{name}={commit}" for name, _kind, commit in sides))
        if self.compared.get(agent.id) == signature:
            return []
        try:
            outcomes = scratch.merge([(mine.commit, commit) for _name, _kind, commit in sides])
        except (GitError, ValueError) as e:
            log.warning("conflict check of %s failed: %s", agent.id, e)
            for name, kind, _commit in sides:  # a snapshot whose objects went is taken again next time
                if kind == "agent":
                    self.snapshots.pop(name, None)
            return []
        self.compared[agent.id] = signature
        told = []
        for (name, kind, _commit), outcome in zip(sides, outcomes, strict=True):
            collision = self._collision(scratch, agent, name, kind, outcome)
            if self._tell(agent, name if kind == "agent" else f"branch:{name}", collision):
                told.append(collision)
        return told

    def _collision(
        self, scratch: Scratch, agent: Agent, other: str, kind: str, outcome: MergeOutcome
    ) -> Collision:
        hunks = {}
        for found in [f for f in outcome.files if f.textual][:MAX_HUNK_FILES]:
            try:
                text = scratch.text(outcome.tree, found.path)
            except GitError:
                continue
            if text is not None:
                hunks[found.path] = parse_hunks(text)
        return Collision(agent.id, other, kind, overlap.overlaps(outcome.files, hunks))

    def _tell(self, agent: Agent, other_key: str, collision: Collision) -> bool:
        """Publish the overlaps not told yet (and mark them); clear the marks of those gone; True: told."""
        keys, client = self.rt.keys, self.rt.client
        marks_key = keys.conflict_marks(agent.id, other_key)
        marks = {str(k): str(v) for k, v in client.hgetall(marks_key).items()}
        fresh, gone = overlap.news(marks, collision.files)
        if gone:
            client.hdel(marks_key, *gone)
        if not fresh:
            return False
        told = Collision(collision.agent, collision.other, collision.against, fresh)
        pipe = client.pipeline()
        pipe.hset(marks_key, mapping={f.shown: f.fingerprint() for f in fresh})
        pipe.expire(marks_key, MARK_TTL)
        pipe.rpush(keys.conflict_notes(agent.id), overlap.note(told))
        pipe.ltrim(keys.conflict_notes(agent.id), -NOTES_KEPT, -1)
        pipe.expire(keys.conflict_notes(agent.id), NOTE_TTL)
        pipe.execute()
        self.rt.publish(
            "conflict_risk", overlap.message(told), **agent.event_fields(), data=overlap.event_data(told)
        )
        log.info(
            "conflict check: %s collides with %s in %d file(s)", agent.id, collision.other_label, len(fresh)
        )
        return True
