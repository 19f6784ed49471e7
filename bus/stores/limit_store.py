"""Usage limits on the bus: which accounts are limited, until when, and the agents each one parked.

One hash per limited account (`limit:<account>`: reset_at, window, since, source, note), the set of its
parked agents (`limit:<account>:agents`) and the set of limited accounts (`limits`). `park_commands`
(bus.costs.usage_limits) builds the writes as plain commands so the hook (on the light client, without
redis-py) and the worker write the same thing; the worker lifts a limit at its reset
(worker.service.limit_resume).
"""

from __future__ import annotations

import redis

from bus.costs.usage_limits import Limit, Reset, park_commands
from bus.wire.keys import Keys


class LimitStore:
    def __init__(self, client: redis.Redis, keys: Keys) -> None:
        self.client = client
        self.keys = keys

    def park(self, account: str, agent: str, reset: Reset, window: str, now: float) -> None:
        pipe = self.client.pipeline(transaction=True)
        for command in park_commands(self.keys, account, agent, reset, window, now):
            pipe.execute_command(*command)  # type: ignore[no-untyped-call]
        pipe.execute()

    def get(self, account: str) -> Limit | None:
        fields = self.client.hgetall(self.keys.limit(account))
        if not fields:
            return None
        agents = self._live(
            account, sorted(str(a) for a in self.client.smembers(self.keys.limit_agents(account)))
        )
        return Limit(
            account=account,
            reset_at=_number(fields.get("reset_at")),
            window=str(fields.get("window") or ""),
            since=_number(fields.get("since")),
            source=str(fields.get("source") or ""),
            note=str(fields.get("note") or ""),
            agents=agents,
        )

    def all(self) -> list[Limit]:
        """Every limited account, the soonest reset first."""
        found = [self.get(str(account)) for account in self.client.smembers(self.keys.limits)]
        return sorted((limit for limit in found if limit is not None), key=lambda limit: limit.reset_at)

    def is_limited(self, account: str, now: float) -> Limit | None:
        """The account's limit while it holds (its reset not yet reached), else None."""
        limit = self.get(account)
        return limit if limit is not None and not limit.due(now) else None

    def unpark(self, account: str, agent: str) -> None:
        self.client.srem(self.keys.limit_agents(account), agent)

    def forget_agent(self, agent: str) -> None:
        """An agent torn down (ib kill, a merge, ib nuke) is parked on no limit any more."""
        for account in self.client.smembers(self.keys.limits):
            self.unpark(str(account), agent)

    def _live(self, account: str, agents: list[str]) -> tuple[str, ...]:
        """The parked agents that still exist; one torn down while parked (before ittybus unparked torn
        down agents) is unparked now, so the limit can be lifted at its reset."""
        pipe = self.client.pipeline(transaction=False)
        for agent in agents:
            pipe.exists(self.keys.agent(agent))
        there = pipe.execute()
        gone = [a for a, found in zip(agents, there, strict=True) if not found]
        if gone:
            self.client.srem(self.keys.limit_agents(account), *gone)
        return tuple(a for a, found in zip(agents, there, strict=True) if found)

    def lift(self, account: str, reset_at: float) -> bool:
        """Forget the account's limit once its agents are resumed, unless a newer report moved its reset
        meanwhile (a resumed agent hit the limit again); True when it was lifted."""
        key = self.keys.limit(account)
        with self.client.pipeline(transaction=True) as pipe:
            try:
                pipe.watch(key, self.keys.limit_agents(account))  # type: ignore[no-untyped-call]
                stored = _number(pipe.hget(key, "reset_at"))
                if stored != round(reset_at, 3) or pipe.scard(self.keys.limit_agents(account)):
                    return False
                pipe.multi()
                pipe.delete(key)
                pipe.srem(self.keys.limits, account)
                pipe.execute()
            except redis.WatchError:
                return False
        return True


def _number(value: object) -> float:
    try:
        return float(str(value))
    except ValueError:
        return 0.0
