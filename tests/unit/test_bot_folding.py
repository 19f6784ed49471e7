"""Folding in the outbound queue, on a fake clock: routine events fold into one digest per topic when the
chat's budget cannot keep up, what waits on a person is never folded and goes first, the folded events'
tokens are confirmed with their digest, and the chat unfolds once calm."""

from __future__ import annotations

import pytest

from bot.delivery.folding import DIGEST_EVERY, fold_at, unfold_at
from bot.delivery.outbound import Batch, Limits, Outbox, Outgoing
from bot.render.digest_render import Fold, fold_of, render_digest
from bus.events.envelope import make_event
from bus.events.event_model import Event

CHAT = -100
MINUTE = Limits(window=60.0)


def routine(n: int, thread: int | None = 1, status: str = "running") -> Outgoing:
    fold = Fold("agent", f"agent-{n}", status)
    return Outgoing(CHAT, thread, f"agent-{n}: waiting → {status}", tokens=(f"e|{n}-0|data",), fold=fold)


def urgent(n: int, thread: int | None = 1) -> Outgoing:
    token = f"e|{n}-0|data"
    return Outgoing(CHAT, thread, f"❓ agent-{n} asks", tokens=(token,), urgent=True, anchor=f"q{n}")


def drain(outbox: Outbox, start: float, until: float) -> list[tuple[float, Batch]]:
    """Take everything the limits allow up to `until`, as the sender would, on a jumping clock."""
    now, out = start, list[tuple[float, Batch]]()
    while now <= until:
        batch = outbox.take(now)
        if batch is not None:
            outbox.sent(batch, now, batch.edit or 1000 + len(out))
            out.append((now, batch))
            continue
        wait = outbox.wait(now)
        if wait is None:
            break
        now += max(wait, 1e-6)
    return out


# --- when a chat folds -----------------------------------------------------------------------------

STARTS = [
    # (routine items, in how many topics, folds)
    ("as-many-messages-as-the-minute-sends", 20, 20, False),
    ("one-message-more", 21, 21, True),
    ("many-events-in-one-topic-merge-into-one-message", 40, 1, False),
    ("many-topics-with-several-each", 90, 30, True),
]


@pytest.mark.parametrize(("items", "topics", "folds"), [s[1:] for s in STARTS], ids=[s[0] for s in STARTS])
def test_a_chat_folds_when_its_backlog_outgrows_the_budget(items: int, topics: int, folds: bool) -> None:
    outbox = Outbox(MINUTE)
    for n in range(items):
        outbox.put(routine(n, thread=n % topics), now=0.0)
    assert outbox.folding(CHAT) is folds
    assert len(outbox) == items  # folded or queued, nothing is dropped


def test_the_thresholds_come_from_the_budget() -> None:
    assert fold_at(MINUTE) == 20  # a whole minute of 20 a minute
    assert unfold_at(MINUTE) == 5  # a quarter of the minute's budget
    assert fold_at(Limits().scaled(100)) == 20  # a scaled clock keeps the counts


def test_folded_events_show_in_one_digest_per_topic_edited_in_place() -> None:
    outbox = Outbox(MINUTE)
    for n in range(21):  # 21 topics: the chat folds
        outbox.put(routine(n, thread=n), now=0.0)
    for n in range(21, 40):  # then more for topic 0
        outbox.put(routine(n, thread=0, status="complete" if n % 5 == 0 else "running"), now=0.0)
    assert outbox.folding(CHAT)
    first = drain(outbox, 0.0, 59.0)
    assert [b.digest for _t, b in first] == [True] * 12  # 20 a minute, less the reserve of 8
    assert [b.edit for _t, b in first] == [None] * 12  # one new digest message per topic
    assert first[0][1].thread == 0
    assert first[0][1].text.startswith("🗂 <b>20 agents</b>: 17 running, 3 complete")
    assert "20 events folded" in first[0][1].text

    for n in range(40, 43):  # more for topic 0, while the chat still folds
        outbox.put(routine(n, thread=0, status="waiting"), now=59.0)
    again = drain(outbox, 59.0, 200.0)
    at, edit = next((t, b) for t, b in again if b.thread == 0)
    assert edit.digest and edit.edit == 1000  # topic 0's digest, edited in place
    assert at >= first[0][0] + DIGEST_EVERY  # an edit waits its interval, more piles up meanwhile
    assert "23 agents</b>: 17 running, 3 complete, 3 waiting" in edit.text
    assert "23 events folded" in edit.text
    assert edit.tokens == ("e|40-0|data", "e|41-0|data", "e|42-0|data")


def test_what_waits_on_a_person_is_never_folded_and_goes_first() -> None:
    outbox = Outbox(MINUTE)
    for n in range(30):
        outbox.put(routine(n, thread=n), now=0.0)
    outbox.put(urgent(99, thread=5), now=0.0)
    assert outbox.folding(CHAT)
    batches = drain(outbox, 0.0, 30.0)
    first = batches[0][1]
    assert not first.digest and first.anchor == "q99" and first.tokens == ("e|99-0|data",)


def test_the_digests_leave_the_minute_reserve_for_what_waits_on_a_person() -> None:
    outbox = Outbox(MINUTE)
    for n in range(40):
        outbox.put(routine(n, thread=n), now=0.0)
    spent = drain(outbox, 0.0, 59.0)  # 40 topics' digests, within one minute
    assert len(spent) == 12  # 20 a minute, less the reserve of 8
    outbox.put(urgent(99, thread=3), now=59.0)
    assert outbox.wait(59.0) == pytest.approx(0.0)  # a question still goes at once


def test_every_folded_token_is_confirmed_with_its_digest() -> None:
    outbox = Outbox(MINUTE)
    for n in range(50):
        outbox.put(routine(n, thread=n % 4), now=0.0)
    outbox.put(urgent(99, thread=2), now=0.0)
    confirmed = [t for _t, b in drain(outbox, 0.0, 600.0) for t in b.tokens]
    assert sorted(confirmed) == sorted([f"e|{n}-0|data" for n in [*range(50), 99]])
    assert len(outbox) == 0


def test_a_digest_telegram_refused_goes_back_with_its_tokens() -> None:
    outbox = Outbox(MINUTE)
    for n in range(22):
        outbox.put(routine(n, thread=n), now=0.0)
    batch = outbox.take(0.0)
    assert batch is not None and batch.digest and batch.tokens == ("e|0-0|data",)
    outbox.put_back(batch)
    assert len(outbox) == 22
    again = outbox.take(0.0)
    assert again is not None and again.tokens == batch.tokens


def test_a_message_below_the_digest_moves_it_to_the_bottom() -> None:
    outbox = Outbox(MINUTE)
    for n in range(22):
        outbox.put(routine(n, thread=n), now=0.0)
    first = drain(outbox, 0.0, 59.0)
    outbox.put(urgent(99, thread=0), now=60.0)
    outbox.put(routine(50, thread=0), now=60.0)
    after = [b for _t, b in drain(outbox, 60.0, 300.0) if b.thread == 0]
    assert [b.digest for b in after] == [False, True]
    assert after[1].edit is None  # a new digest under the question, not an edit above it
    assert "1 agent</b>: 1 running" in after[1].text
    assert first[0][1].digest


def test_a_calm_chat_unfolds_and_sends_one_message_per_event_again() -> None:
    outbox = Outbox(MINUTE)
    for n in range(22):
        outbox.put(routine(n, thread=n), now=0.0)
    drain(outbox, 0.0, 29.0)
    outbox.put(routine(50, thread=1), now=29.0)  # still within the minute the burst arrived in
    assert outbox.folding(CHAT)
    drain(outbox, 29.0, 400.0)
    assert not outbox.folding(CHAT)  # a minute later: few arrivals
    outbox.put(routine(51, thread=1), now=401.0)
    batch = outbox.take(401.0)
    assert batch is not None and not batch.digest and batch.text == "agent-51: waiting → running"


def test_a_chat_at_the_edge_does_not_flap() -> None:
    """Six events a minute keep a folding chat folded (more than a quarter of the budget), though they
    would never have made it fold."""
    outbox = Outbox(MINUTE)
    for n in range(22):
        outbox.put(routine(n, thread=n), now=0.0)
    for minute in range(1, 4):
        for k in range(6):
            outbox.put(routine(100 * minute + k, thread=k), now=minute * 60.0 + k * 10.0)
        drain(outbox, minute * 60.0, minute * 60.0 + 59.0)
        assert outbox.folding(CHAT)


# --- what a digest says ----------------------------------------------------------------------------


def _event(type_: str, **data: object) -> Event:
    return Event.from_envelope(make_event(type_, agent="agent-1", task="t1", data=dict(data)))


FOLDS = [
    ("state", _event("state", from_state="running", to_state="waiting"), Fold("agent", "agent-1", "waiting")),
    ("complete", _event("complete"), Fold("agent", "agent-1", "complete")),
    ("task-done", _event("task_done"), Fold("task", "t1", "done")),
    ("question-waits-on-a-person", _event("question", question="ok?"), None),
    ("permission-waits-on-a-person", _event("permission", prompt_id="p1"), None),
    ("error-waits-on-a-person", _event("error", error="boom"), None),
    ("usage-limit-waits-on-a-person", _event("limited"), None),
    ("budget-pause-waits-on-a-person", _event("budget_exceeded"), None),
    ("an-agents-words-are-not-counted", _event("message"), None),
]


@pytest.mark.parametrize(("event", "fold"), [f[1:] for f in FOLDS], ids=[f[0] for f in FOLDS])
def test_how_an_event_reads_in_a_digest(event: Event, fold: Fold | None) -> None:
    assert fold_of(event) == fold


def test_a_digest_counts_each_subject_once_by_its_latest_status() -> None:
    latest = {("agent", f"a{i}"): s for i, s in enumerate(["running"] * 9 + ["waiting"] * 2 + ["complete"])}
    latest[("task", "t1")] = "done"
    text = render_digest(latest, 57)
    assert "<b>12 agents</b>: 9 running, 2 waiting, 1 complete" in text
    assert "<b>1 task</b>: 1 done" in text
    assert "57 events folded" in text
