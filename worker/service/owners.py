"""Which agents are this worker's, as its event handling asks for every event of the bus.

Every worker reads every event, and most are about another worker's agents: their turn ends, states and
dialogs need nothing from this one. Asking Redis about the agent of each event cost every worker a read per
event (ten workers, ten reads), so the answer is kept: this worker's own agents from its index (refreshed
each tick), and the agents found to be another's, asked once each (the record's worker; the agents of a
batch of events that are not known yet, in one round trip).
An agent that ends (`stopped`, `killed`) or is made again (`spawned`) is asked again: the same id may come
back on this worker.
"""

from __future__ import annotations

from collections.abc import Iterable

from bus.stores.agent_store import AgentStore

ASKED_AGAIN = frozenset({"spawned", "stopped", "killed"})
"""Event types after which an agent's worker is asked again."""


class Owners:
    def __init__(self, agents: AgentStore, me: str) -> None:
        self.agents = agents
        self.me = me
        self.mine: frozenset[str] = frozenset()
        self.others: set[str] = set()

    def refresh(self, mine: Iterable[str]) -> None:
        """This worker's agents, as its tick read them from its index."""
        self.mine = frozenset(mine)
        self.others -= self.mine

    def forget_others(self) -> None:
        """Ask again about every other worker's agent (the worker's index repair, every few minutes): the
        agents that ended and were removed leave the memory."""
        self.others.clear()

    def learn(self, agent_ids: Iterable[str]) -> None:
        """Ask at once about the agents of a batch of events that are not known yet (a worker that starts
        on a busy bus meets thousands of other workers' agents: one read each took it tens of seconds)."""
        unknown = {a for a in agent_ids if a not in self.mine and a not in self.others}
        if unknown:
            found = self.agents.workers_of(sorted(unknown))
            self.others |= {a for a, worker in found.items() if worker and worker != self.me}

    def elsewhere(self, agent_id: str, event_type: str) -> bool:
        """Whether the agent is another worker's: an event about it asks nothing of this one. False for
        an agent of this worker, and for one with no record (as before, every worker handles those)."""
        if event_type in ASKED_AGAIN:
            self.others.discard(agent_id)
        if agent_id in self.mine:
            return False
        if agent_id in self.others:
            return True
        worker = self.agents.worker_of(agent_id)
        if worker and worker != self.me:
            self.others.add(agent_id)
            return True
        return False
