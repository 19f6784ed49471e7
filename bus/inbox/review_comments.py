"""The comments of a review waiting for "Request changes": kept per agent on Redis, whichever front end
they were made in (a Telegram reply under a /diff picture, `ib review --comment`), and taken together when
the person requests changes, so the agent gets them as one prompt (bus.inbox.review_prompt.changes_prompt).
"""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import cast

import redis

from bus.inbox.review_prompt import Comment
from bus.wire.keys import Keys

KEEP = 3 * 24 * 3600  # seconds the comments wait; as long as a /diff picture stays answerable


def _comment(raw: str) -> Comment | None:
    try:
        data = json.loads(raw)
        return Comment(
            str(data["path"]), int(data["first"]), int(data["last"]), str(data["text"]), str(data["stale"])
        )
    except (ValueError, KeyError, TypeError):
        return None  # not one of ours: left out, never sent


class ReviewComments:
    """The comments waiting for each agent. `client` must decode responses."""

    def __init__(self, client: redis.Redis, keys: Keys) -> None:
        self.client, self.keys = client, keys

    def add(self, agent: str, comment: Comment) -> int:
        """Keep `comment` for `agent`'s next request for changes; how many are waiting now."""
        key = self.keys.review_comments(agent)
        pipe = self.client.pipeline(transaction=True)
        pipe.rpush(key, json.dumps(asdict(comment), ensure_ascii=False))
        pipe.expire(key, KEEP)
        return int(pipe.execute()[0])

    def waiting(self, agent: str) -> tuple[list[Comment], int]:
        """The comments waiting for `agent`, oldest first, and how many entries were read (what `sent`
        takes: an entry that is no comment is read, left out and dropped with them)."""
        raw = cast(list[str], self.client.lrange(self.keys.review_comments(agent), 0, -1))
        return [c for c in map(_comment, raw) if c is not None], len(raw)

    def sent(self, agent: str, count: int) -> None:
        """The first `count` comments reached the agent: they go; any made meanwhile stay waiting."""
        self.client.ltrim(self.keys.review_comments(agent), count, -1)

    def drop(self, agent: str) -> int:
        """Forget the comments waiting for `agent` (its change was approved); how many there were."""
        key = self.keys.review_comments(agent)
        pipe = self.client.pipeline(transaction=True)
        pipe.llen(key)
        pipe.delete(key)
        return int(pipe.execute()[0])
