"""/auto loops on Redis: `auto:<project>` holds a loop's state and the actions it still has to run (its
outbox), `autos` indexes the projects that have one. A worker restart reads them back and goes on.
"""

from __future__ import annotations

import json
from typing import Any

import redis

from bus.stores.auto_state import AutoState
from bus.stores.hashes import members, read_hash, write_hash
from bus.wire.keys import Keys

Outbox = list[dict[str, Any]]
OUTBOX_FIELD = "outbox"


class AutoStore:
    """`client` must decode responses."""

    def __init__(self, client: redis.Redis, keys: Keys) -> None:
        self.client = client
        self.keys = keys

    def load(self, project: str) -> tuple[AutoState, Outbox] | None:
        key = self.keys.auto(project)
        data = read_hash(self.client, key)
        if not data.get(AutoState.hash_key("project")):
            return None
        outbox = json.loads(data.get(OUTBOX_FIELD) or "[]")
        return AutoState.from_hash(data, key=key), outbox if isinstance(outbox, list) else []

    def get(self, project: str) -> AutoState | None:
        found = self.load(project)
        return found[0] if found else None

    def save(self, state: AutoState, outbox: Outbox) -> None:
        """The state and the outbox in one write: a restart never sees one without the other."""
        values = {**state.to_hash(), OUTBOX_FIELD: json.dumps(outbox, ensure_ascii=False)}
        pipe = self.client.pipeline(transaction=True)
        write_hash(pipe, self.keys.auto(state.project), values)
        pipe.sadd(self.keys.autos, state.project)
        pipe.execute()

    def all(self) -> list[AutoState]:
        found = (self.get(project) for project in sorted(members(self.client, self.keys.autos)))
        return [state for state in found if state is not None]
