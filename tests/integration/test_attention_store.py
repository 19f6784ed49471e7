"""The attention items in real Redis: opened once per event and per agent and kind, closed by the first
answer or by the agent moving on, and deliveries taken only while open."""

from __future__ import annotations

import threading

import redis

from bus.events.envelope import make_event
from bus.events.event_model import Event
from bus.events.streams import publish
from bus.inbox.attention import AttentionStore
from bus.wire.keys import Keys
from tests.waiting import retry_until


def _event(rds: redis.Redis, keys: Keys, type_: str, agent: str = "agent-1", **data: object) -> Event:
    envelope = make_event(type_, f"{agent}: {type_}", sender=agent, agent=agent, data=dict(data))
    entry_id = publish(rds, keys, envelope, 1000)
    return Event.from_envelope({**envelope, "id": entry_id})


def test_a_needs_you_opens_once_and_a_repeat_joins_it(rds: redis.Redis, keys: Keys) -> None:
    store = AttentionStore(rds, keys)
    first = store.raise_for(_event(rds, keys, "permission"))
    again = store.raise_for(_event(rds, keys, "permission"))
    other = store.raise_for(_event(rds, keys, "question"))
    assert first is not None and again is not None and other is not None
    assert again.id == first.id
    assert [i.id for i in store.open_items()] == [first.id, other.id]
    assert store.raise_for(_event(rds, keys, "complete")) is None


def test_moving_on_closes_only_what_came_before(rds: redis.Redis, keys: Keys) -> None:
    """Two workers read the same events, one of them late: the late one neither reopens an answered
    item nor closes one raised after the event it reads."""
    early, late = AttentionStore(rds, keys), AttentionStore(rds, keys)
    events = [
        _event(rds, keys, "permission"),
        _event(rds, keys, "state", to_state="running"),
        _event(rds, keys, "permission"),
    ]
    for event in events:
        early.on_event(event)
    second = events[2].id
    assert [i.event for i in early.open_items()] == [second]
    for event in events:
        late.on_event(event)
    assert [i.event for i in early.open_items()] == [second]
    closed = early.get(f"n-{events[0].id}")
    assert closed is not None and not closed.open and closed.answered_by.startswith("state event")


def test_a_dialog_seen_again_on_the_pane_is_no_answer(rds: redis.Redis, keys: Keys) -> None:
    store = AttentionStore(rds, keys)
    store.on_event(_event(rds, keys, "permission"))
    assert store.on_event(_event(rds, keys, "state", to_state="permission")) == []
    assert len(store.open_items()) == 1


def test_two_people_answering_at_once_close_it_once(rds: redis.Redis, keys: Keys) -> None:
    store = AttentionStore(rds, keys)
    item = store.raise_for(_event(rds, keys, "permission"))
    assert item is not None
    results: dict[str, list[str]] = {}
    start = threading.Barrier(2)

    def answer(who: str) -> None:
        start.wait()
        results[who] = AttentionStore(rds, keys).answer("agent-1", who)

    threads = [threading.Thread(target=answer, args=(who,)) for who in ("ann", "bob")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(len(ids) for ids in results.values()) == [0, 1]
    winner = next(who for who, ids in results.items() if ids)
    closed = store.get(item.id)
    assert closed is not None and closed.answered_by == winner
    assert store.open_items() == []


def test_a_delivery_is_taken_once_and_never_after_the_answer(rds: redis.Redis, keys: Keys) -> None:
    store = AttentionStore(rds, keys)
    item = store.raise_for(_event(rds, keys, "waiting"))
    assert item is not None
    assert store.take(item.id, "dm:0:4242")
    assert not store.take(item.id, "dm:0:4242")  # held by the first taker
    store.delivered(item.id, "dm:0:4242")
    assert not store.take(item.id, "dm:0:4242")
    assert store.take(item.id, "channels:0:0", lease_ms=1)
    # a taker that died mid-send lets go when its lease ends
    retry_until(lambda: store.take(item.id, "channels:0:0"), 5, 0.01, "the lease to end")
    store.answer("agent-1", "ann")
    assert not store.take(item.id, "dm:1:4242")
    assert store.delivered_to(item.id) == {"dm:0:4242"}
