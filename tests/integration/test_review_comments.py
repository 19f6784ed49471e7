"""The comments of a review waiting for Request changes, on a real Redis: kept in order, taken by count so a
comment made while the prompt was on its way stays, an entry that is no comment dropped with them, a TTL."""

from __future__ import annotations

import redis

from bus.inbox.review_comments import KEEP, ReviewComments
from bus.inbox.review_prompt import Comment
from bus.wire.keys import Keys


def test_comments_wait_in_order_and_go_once_sent(rds: redis.Redis, keys: Keys) -> None:
    store = ReviewComments(rds, keys)
    first, second = Comment("calc.py", 1, 2, "use sum()"), Comment("ü b.txt", 3, 4, "why?", stale="changed")
    assert store.waiting("a1") == ([], 0)
    assert store.add("a1", first) == 1 and store.add("a1", second) == 2
    assert 0 < int(rds.ttl(keys.review_comments("a1"))) <= KEEP
    comments, read = store.waiting("a1")
    assert (comments, read) == ([first, second], 2)

    late = Comment("calc.py", 9, 9, "one more")
    store.add("a1", late)  # made while the prompt was on its way
    store.sent("a1", read)
    assert store.waiting("a1") == ([late], 1)
    assert store.waiting("a2") == ([], 0)


def test_an_entry_that_is_no_comment_is_left_out_and_dropped_with_them(rds: redis.Redis, keys: Keys) -> None:
    store = ReviewComments(rds, keys)
    rds.rpush(keys.review_comments("a1"), "not json", '{"path": "x"}')
    store.add("a1", Comment("calc.py", 1, 1, "fine"))
    comments, read = store.waiting("a1")
    assert comments == [Comment("calc.py", 1, 1, "fine")] and read == 3
    store.sent("a1", read)
    assert rds.exists(keys.review_comments("a1")) == 0


def test_approving_drops_what_waits(rds: redis.Redis, keys: Keys) -> None:
    store = ReviewComments(rds, keys)
    store.add("a1", Comment("calc.py", 1, 1, "fine"))
    assert store.drop("a1") == 1 and store.drop("a1") == 0
