"""The Approve notes being followed, kept in Redis: a restarted bot follows each on from where its merge
stands (bot.review.approval), so a restart never leaves a note at "in the merge queue" while the merge
goes on.

One hash field per merge request, the note as JSON; the follower drops it once the merge ended and the note
says so. A field that does not read is dropped with a warning: its note stays as it was.
"""

from __future__ import annotations

import logging
from typing import cast

import redis.asyncio as aredis
from pydantic import BaseModel, ConfigDict, ValidationError

from bus.wire.keys import Keys

log = logging.getLogger(__name__)


class Followed(BaseModel):
    """An Approve note: the merge request it follows, its message, and the parts of its first lines."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    agent: str
    merge: str
    thread: int | None
    message: int
    reply_to: int | None = None
    where: str  # "project → target"
    dropped: int = 0  # the comments approving dropped
    started: float  # Unix seconds: the note stops following FOLLOW_SECONDS after


class ApprovalMemory:
    def __init__(self, client: aredis.Redis, keys: Keys) -> None:
        self.client = client
        self.keys = keys

    async def keep(self, followed: Followed) -> None:
        await self.client.hset(self.keys.approvals_followed, followed.merge, followed.model_dump_json())

    async def forget(self, followed: Followed) -> None:
        await self.client.hdel(self.keys.approvals_followed, followed.merge)

    async def recall(self) -> list[Followed]:
        """Every note still followed; the fields that do not read are dropped."""
        fields = cast(dict[str, str], await self.client.hgetall(self.keys.approvals_followed))
        kept: list[Followed] = []
        for merge, raw in sorted(fields.items()):
            try:
                followed = Followed.model_validate_json(raw)
            except ValidationError as e:
                why = e.errors()[0]["msg"]
            else:
                if followed.merge == merge:
                    kept.append(followed)
                    continue
                why = f"it names merge {followed.merge}"
            log.warning("approval of merge %s: its record does not read (%s); dropped", merge, why)
            await self.client.hdel(self.keys.approvals_followed, merge)
        return kept
