"""The worker's budget keeper: what each read of an agent's answers cost goes to the agent's, its task's
and the day's spent amounts; a budget at 80 % sends one `budget_warning`, at 100 % one `budget_exceeded`,
and the agents it covers are held (their PreToolUse hook refuses) while it stays used up.

Every tick looks at this worker's live agents again, so a day budget pauses the agents that spent
nothing since, and a raise (from any machine) or a new day lets them go on.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Iterable

from bus.costs.budgets import Budget, next_step, pause_reason, raise_step
from bus.costs.usage import Usage, spend
from bus.stores import budget_store
from bus.stores.agent_store import Agent
from worker.runtime import Runtime

log = logging.getLogger(__name__)
GONE = frozenset({"stopped", "killed"})


class BudgetKeeper:
    def __init__(self, rt: Runtime) -> None:
        self.rt = rt

    def charge(self, agent: Agent, answers: Iterable[Usage]) -> None:
        """Add new answers of `agent` to what it, their task and their day spent, then look at its budgets."""
        groups: dict[tuple[str, str], list[Usage]] = defaultdict(list)
        for answer in answers:
            groups[(answer.task, budget_store.today(answer.at or None))].append(answer)
        if not groups:
            return
        pipe = self.rt.client.pipeline()
        for (task, day), records in groups.items():
            total = spend(records, self.rt.settings.prices)
            budget_store.charge(pipe, self.rt.keys, agent.id, task, day, total.usd, total.tokens)
        pipe.execute()
        self.look(agent)

    def tick(self, agents: list[Agent] | None = None) -> None:
        """Each of this worker's agents held or let go (`agents`: as the worker read them for this tick)."""
        found = self.rt.agents.of_worker(self.rt.worker_id) if agents is None else agents
        live = [agent for agent in found if agent.state not in GONE]
        if not live:
            return
        day = budget_store.today()
        pairs = [(agent.id, agent.task) for agent in live]
        looks = budget_store.covering_each(
            self.rt.client, self.rt.keys, pairs, day, self.rt.settings.day_limit
        )
        for agent, (covering, held) in zip(live, looks, strict=True):
            self._settle(agent, covering, held)

    def look(self, agent: Agent) -> None:
        """Hold or let go of the agent by its budgets, then send what they ask for (paused, then told)."""
        client, keys = self.rt.client, self.rt.keys
        covering = budget_store.covering(
            client, keys, agent.id, agent.task, budget_store.today(), self.rt.settings.day_limit
        )
        self._settle(agent, covering, budget_store.hold_of(client, keys, agent.id))

    def _settle(self, agent: Agent, covering: list[Budget], held: dict[str, str]) -> None:
        client, keys = self.rt.client, self.rt.keys
        over = next((b for b in covering if b.over), None)
        if over is not None and not held:
            fields = {"scope": over.scope, "target": over.target}
            if budget_store.hold(client, keys, agent.id, budget_store.BUDGET, pause_reason(over), **fields):
                log.info("budgets: %s paused, %s", agent.id, over.words())
        elif over is None and held.get("kind") == budget_store.BUDGET:
            budget_store.release(client, keys, agent.id)  # raised elsewhere, or a new day
            log.info("budgets: %s goes on, no budget of it is used up now", agent.id)
        for item in covering:
            step = next_step(item)
            if step and budget_store.mark(client, keys, item, step):
                self._tell(agent, item, step)

    def _tell(self, agent: Agent, item: Budget, step: str) -> None:
        kind = "budget_exceeded" if step == "exceeded" else "budget_warning"
        words = item.words()
        msg = f"{agent.id} used up {words}" if step == "exceeded" else f"{agent.id} is near {words}"
        self.rt.publish(kind, msg, **agent.event_fields(), data=budget_data(item))
        log.info("budgets: %s %s: %s", kind, agent.id, words)


def budget_data(item: Budget) -> dict[str, object]:
    """A budget event's data: which budget, its limit and what is spent, and what Raise adds."""
    unit = item.limit.unit
    return {
        "scope": item.scope,
        "target": item.target,
        "unit": unit,
        "limit": item.limit.value,
        "spent": round(item.spent.of(unit), 6),
        "share": round(item.share, 4),
        "limit_shown": str(item.limit),
        "spent_shown": item.spent.shown(unit),
        "raise_by": str(raise_step(item.limit)),
    }
