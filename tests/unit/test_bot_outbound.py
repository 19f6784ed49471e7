"""The outbound queue on a fake clock: Telegram's limits, merging what piles up, 429 holds, streaming."""

from __future__ import annotations

import pytest

from bot.delivery.outbound import OUTPUT_EDIT_EVERY, OUTPUT_RESERVE, Batch, Limits, Outbox, Outgoing, Pacer
from bot.render.render import Button

CHAT, OTHER_CHAT = -100, -200
MINUTE = Limits(window=60.0)  # Telegram's minute, without the bot's margin of a second
BUTTONS = ((Button("Look", "l:agent-1"),),)


def item(text: str, thread: int | None = 1, **fields: object) -> Outgoing:
    return Outgoing(CHAT, thread, text, **fields)  # type: ignore[arg-type]


def drain(outbox: Outbox, start: float = 0.0, until: float = 1000.0) -> list[tuple[float, Batch]]:
    """Take everything as the sender would, on a fake clock that jumps to the next allowed moment."""
    now, out = start, list[tuple[float, Batch]]()
    while now <= until:
        batch = outbox.take(now)
        if batch is not None:
            outbox.sent(batch, now, 1000 + len(out))
            out.append((now, batch))
            continue
        wait = outbox.wait(now)
        if wait is None:
            break
        now += wait
    return out


# --- the pacer ----------------------------------------------------------------------------------------

PACING = [
    # (sends at these times, reserve, ask at, expected wait)
    ("idle-sends-now", [], 0, 0.0, 0.0),
    ("one-a-second", [0.0], 0, 0.4, 0.6),
    ("gap-passed", [0.0], 0, 1.0, 0.0),
    ("twenty-a-minute", [float(i) for i in range(20)], 0, 20.0, 40.0),
    ("window-slides", [float(i) for i in range(20)], 0, 60.0, 0.0),
    ("reserve-left-unspent", [float(i) for i in range(15)], 5, 20.0, 40.0),
    ("reserve-frees-with-the-oldest", [float(i) for i in range(16)], 5, 20.0, 41.0),
    ("room-beside-the-reserve", [float(i) for i in range(14)], 5, 20.0, 0.0),
    ("all-reserved", [], 20, 0.0, 60.0),
]


@pytest.mark.parametrize(
    ("sends", "reserve", "at", "expected"), [p[1:] for p in PACING], ids=[p[0] for p in PACING]
)
def test_pacer(sends: list[float], reserve: int, at: float, expected: float) -> None:
    pacer = Pacer(MINUTE)
    for t in sends:
        pacer.record(t)
    assert pacer.wait(at, reserve) == pytest.approx(expected)


def test_what_other_processes_spent_counts_too() -> None:
    pacer = Pacer(MINUTE)
    pacer.heard([float(i) for i in range(20)])  # a bot before this one spent the minute
    assert pacer.wait(20.0) == pytest.approx(40.0)
    pacer.heard([])
    assert pacer.wait(20.0) == 0.0


def test_a_hold_delays_only_its_chat() -> None:
    outbox = Outbox(MINUTE)
    outbox.put(item("a"))
    outbox.put(Outgoing(OTHER_CHAT, 1, "b"))
    outbox.hold(CHAT, 5.0)
    first = outbox.take(0.0)
    assert first is not None and first.chat == OTHER_CHAT
    outbox.sent(first, 0.0, 1)
    assert outbox.take(1.0) is None
    assert outbox.wait(1.0) == pytest.approx(4.0)
    later = outbox.take(5.0)
    assert later is not None and later.text == "a"


def test_scaled_limits_run_faster() -> None:
    limits = Limits().scaled(10)
    assert (limits.per_second, limits.per_minute, limits.window) == (10.0, 20, 6.1)  # a second's margin
    assert limits.local_seconds(30) == 3.0  # Telegram's retry_after, on the scaled clock
    with pytest.raises(ValueError, match="positive"):
        Limits().scaled(0)


def test_twenty_topics_at_twenty_a_minute_then_the_window() -> None:
    outbox = Outbox(MINUTE)
    for thread in range(25):
        outbox.put(item(f"event for {thread}", thread))
    sent = drain(outbox)
    times = [t for t, _ in sent]
    assert times[:20] == [float(i) for i in range(20)]
    assert times[20] == pytest.approx(60.0)
    assert len(sent) == 25


# --- merging -------------------------------------------------------------------------------------------


def texts(sent: list[tuple[float, Batch]]) -> list[str]:
    return [batch.text for _t, batch in sent]


MERGES = [
    ("piled-up-become-one", [item("a"), item("b"), item("c")], ["a\nb\nc"]),
    ("buttons-end-a-message", [item("a"), item("b", buttons=BUTTONS), item("c")], ["a\nb", "c"]),
    ("anchor-ends-a-message", [item("a"), item("q?", anchor="q-1"), item("c")], ["a\nq?", "c"]),
    ("replies-go-alone", [item("a"), item("r", mergeable=False), item("c")], ["a", "r", "c"]),
    (
        "over-the-limit-splits",
        [item("x" * 30), item("y" * 30), item("z" * 30)],
        ["x" * 30 + "\n" + "y" * 30, "z" * 30],
    ),
    ("topics-stay-apart", [item("a", 1), item("b", 2), item("c", 1)], ["a\nc", "b"]),
]


@pytest.mark.parametrize(("items", "expected"), [m[1:] for m in MERGES], ids=[m[0] for m in MERGES])
def test_merging(items: list[Outgoing], expected: list[str]) -> None:
    outbox = Outbox(MINUTE, message_limit=64)
    for i in items:
        outbox.put(i)
    assert texts(drain(outbox)) == expected


def test_merged_message_carries_every_token_and_the_last_buttons() -> None:
    outbox = Outbox(MINUTE)
    outbox.put(item("a", tokens=("t1",)))
    outbox.put(item("b", tokens=("t2",), buttons=BUTTONS, anchor="q-1"))
    batch = outbox.take(0.0)
    assert batch is not None
    assert (batch.tokens, batch.buttons, batch.anchor) == (("t1", "t2"), BUTTONS, "q-1")


def test_urgent_replies_go_before_the_backlog() -> None:
    outbox = Outbox(MINUTE)
    outbox.put(item("old event", 1))
    outbox.put(item("answer to a person", 2, urgent=True, mergeable=False))
    assert texts(drain(outbox)) == ["answer to a person", "old event"]


def test_oldest_topic_first() -> None:
    outbox = Outbox(MINUTE)
    outbox.put(item("first", 3))
    outbox.put(item("second", 1))
    outbox.put(item("third", 2))
    assert texts(drain(outbox)) == ["first", "second", "third"]


def test_put_back_keeps_the_order() -> None:
    outbox = Outbox(MINUTE, message_limit=8)
    for text in ("aaa", "bbb", "ccc"):
        outbox.put(item(text))
    batch = outbox.take(0.0)
    assert batch is not None and batch.text == "aaa\nbbb"
    outbox.put_back(batch)
    assert texts(drain(outbox, start=1.0)) == ["aaa\nbbb", "ccc"]


def test_move_to_another_topic_keeps_the_order() -> None:
    outbox = Outbox(MINUTE, message_limit=8)
    outbox.put(item("aaa", 1))
    outbox.put(item("bbb", 2))
    outbox.put(item("ccc", 1))
    outbox.move(CHAT, 1, 2)
    sent = drain(outbox)
    assert [(b.thread, b.text) for _t, b in sent] == [(2, "aaa\nbbb"), (2, "ccc")]


def test_when_the_minute_is_spent_what_piles_up_waits_for_the_window_as_one_message() -> None:
    outbox = Outbox(MINUTE)
    for thread in range(20):
        outbox.put(item(f"first {thread}", thread))
    sent = drain(outbox)
    assert len(sent) == 20  # the minute's budget is spent at t=19
    outbox.put(item("more for 0", 0, tokens=("t1",)))
    outbox.put(item("and more", 0, tokens=("t2",)))
    ((t, last),) = drain(outbox, start=20.0)
    assert t == 60.0  # an edit would cost as much as a message: nothing goes before the window
    assert (last.thread, last.edit, last.text, last.tokens) == (0, None, "more for 0\nand more", ("t1", "t2"))


# --- streaming output ------------------------------------------------------------------------------------


def test_output_is_one_message_edited_in_place() -> None:
    outbox = Outbox(MINUTE)
    outbox.put_output(CHAT, 5, "<b>Read</b>(a.py)", ("o1",))
    first = outbox.take(0.0)
    assert first is not None and first.edit is None and first.text == "<b>Read</b>(a.py)"
    outbox.sent(first, 0.0, 77)
    outbox.put_output(CHAT, 5, "  → Read 45 lines", ("o2",))
    outbox.put_output(CHAT, 5, "All done.", ("o3",))
    assert outbox.take(1.0) is None  # an edit waits its interval, and what comes meanwhile piles up
    second = outbox.take(OUTPUT_EDIT_EVERY)
    assert second is not None
    assert (second.edit, second.tokens) == (77, ("o2", "o3"))
    assert second.text == "<b>Read</b>(a.py)\n  → Read 45 lines\nAll done."


def test_output_past_the_soft_limit_starts_a_new_message() -> None:
    outbox = Outbox(MINUTE)
    outbox.put_output(CHAT, 5, "a" * 3000)
    outbox.sent(outbox.take(0.0) or pytest.fail("nothing to send"), 0.0, 10)
    outbox.put_output(CHAT, 5, "b" * 1000)
    outbox.put_output(CHAT, 5, "c" * 10)
    batch = outbox.take(1.0)
    assert batch is not None and batch.edit is None
    assert batch.text == "b" * 1000 + "\n" + "c" * 10


def test_edits_count_towards_the_minute() -> None:
    outbox = Outbox(MINUTE)
    outbox.put_output(CHAT, 1, "first")
    outbox.sent(outbox.take(0.0) or pytest.fail("nothing to send"), 0.0, 50)
    outbox.put_output(CHAT, 1, "second")
    edit = outbox.take(OUTPUT_EDIT_EVERY) or pytest.fail("nothing to send")
    assert edit.edit == 50
    outbox.sent(edit, OUTPUT_EDIT_EVERY, 50)
    for i in range(18):
        outbox.put(item(f"event {i}", 100 + i))
    drain(outbox, start=OUTPUT_EDIT_EVERY + 1)  # 18 events: with the send and the edit, the minute is spent
    outbox.put(item("one too many", 200))
    assert outbox.take(29.0) is None
    assert outbox.wait(29.0) == pytest.approx(31.0)


def test_output_leaves_the_events_share_of_the_minute() -> None:
    outbox = Outbox(MINUTE)
    for i in range(20 - OUTPUT_RESERVE):
        outbox.put(item(f"event {i}", 100 + i))
    drain(outbox)
    now = float(20 - OUTPUT_RESERVE)
    outbox.put_output(CHAT, 1, "agent output")
    assert outbox.take(now) is None
    outbox.put(item("an event", 7))
    assert (outbox.take(now) or pytest.fail("nothing to send")).text == "an event"


def test_a_message_below_the_output_ends_it() -> None:
    outbox = Outbox(MINUTE)
    outbox.put_output(CHAT, 5, "Read(a.py)")
    outbox.sent(outbox.take(0.0) or pytest.fail("nothing to send"), 0.0, 10)
    outbox.put(item("✓ agent-1 completed", 5))
    outbox.sent(outbox.take(1.0) or pytest.fail("nothing to send"), 1.0, 11)
    outbox.put_output(CHAT, 5, "more output")
    batch = outbox.take(2.0)
    assert batch is not None and (batch.edit, batch.text) == (None, "more output")


def test_a_new_turn_starts_a_new_output_message() -> None:
    outbox = Outbox(MINUTE)
    outbox.put_output(CHAT, 5, "turn one", ("o1",))
    outbox.sent(outbox.take(0.0) or pytest.fail("nothing to send"), 0.0, 10)
    outbox.put_output(CHAT, 5, "end of turn one", ("o2",))
    outbox.new_turn(CHAT, 5, ("o3",))
    outbox.put_output(CHAT, 5, "turn two", ("o4",))
    first = outbox.take(OUTPUT_EDIT_EVERY) or pytest.fail("nothing to send")
    assert (first.edit, first.text, first.tokens) == (10, "turn one\nend of turn one", ("o2",))
    outbox.sent(first, OUTPUT_EDIT_EVERY, 10)
    second = outbox.take(OUTPUT_EDIT_EVERY + 1) or pytest.fail("nothing to send")  # new: no interval
    assert (second.edit, second.text, second.tokens) == (None, "turn two", ("o3", "o4"))
    outbox.sent(second, OUTPUT_EDIT_EVERY + 1, 12)
    outbox.put_output(CHAT, 5, "still turn two")
    third = outbox.take(2 * OUTPUT_EDIT_EVERY + 1) or pytest.fail("nothing to send")
    assert (third.edit, third.text) == (12, "turn two\nstill turn two")


def test_a_new_turn_with_nothing_to_show_yet_costs_nothing() -> None:
    outbox = Outbox(MINUTE)
    outbox.put_output(CHAT, 5, "turn one")
    outbox.sent(outbox.take(0.0) or pytest.fail("nothing to send"), 0.0, 10)
    outbox.new_turn(CHAT, 5, ("o2",))
    marker = outbox.take(0.1) or pytest.fail("nothing to send")  # within the gap: it is no call
    assert marker.empty and marker.tokens == ("o2",)
    outbox.sent(marker, 0.1, None)
    outbox.put_output(CHAT, 5, "turn two")
    batch = outbox.take(1.0) or pytest.fail("nothing to send")
    assert (batch.edit, batch.text) == (None, "turn two")


def test_a_deleted_streaming_message_restarts() -> None:
    outbox = Outbox(MINUTE)
    outbox.put_output(CHAT, 5, "one")
    outbox.sent(outbox.take(0.0) or pytest.fail("nothing to send"), 0.0, 10)
    outbox.put_output(CHAT, 5, "two")
    edit = outbox.take(OUTPUT_EDIT_EVERY)
    assert edit is not None and edit.edit == 10
    outbox.restart_stream(CHAT, 5)
    outbox.put_back(edit)
    again = outbox.take(OUTPUT_EDIT_EVERY + 1)
    assert again is not None and again.edit is None and again.text == "two"


def test_blank_output_only_confirms() -> None:
    outbox = Outbox(MINUTE)
    outbox.put_output(CHAT, 5, "   ", ("o9",))
    batch = outbox.take(0.0)
    assert batch is not None and batch.empty and batch.tokens == ("o9",)
    outbox.sent(batch, 0.0, None)
    assert outbox.wait(0.0) is None
    assert len(outbox) == 0


def test_output_queued_before_a_message_goes_before_it() -> None:
    outbox = Outbox(MINUTE)
    outbox.put_output(CHAT, 5, "Read(a.py)")
    outbox.sent(outbox.take(0.0) or pytest.fail("nothing to send"), 0.0, 10)
    outbox.put_output(CHAT, 5, "The last words.", ("o2",))
    outbox.put(item("⏳ agent-1 is waiting", 5))
    outbox.put_output(CHAT, 5, "Written after it.", ("o3",))
    first = outbox.take(1.0) or pytest.fail("nothing to send")  # within the edit interval, all the same
    assert (first.edit, first.text, first.tokens) == (10, "Read(a.py)\nThe last words.", ("o2",))
    assert first.reserve == 0  # it goes as the message after it would
    outbox.sent(first, 1.0, 10)
    second = outbox.take(2.0) or pytest.fail("nothing to send")
    assert second.text == "⏳ agent-1 is waiting"
    outbox.sent(second, 2.0, 11)
    third = outbox.take(3.0) or pytest.fail("nothing to send")
    assert (third.edit, third.text) == (None, "Written after it.")  # below the message


def test_an_edit_goes_alone_and_goes_back_as_a_new_message_when_its_message_is_gone() -> None:
    outbox = Outbox(MINUTE)
    outbox.put(item("before"))
    outbox.put(item("the dialog, told again", buttons=BUTTONS, edit=41))
    outbox.put(item("after"))
    batches = [batch for _at, batch in drain(outbox)]
    assert [(b.text, b.edit) for b in batches] == [
        ("before", None),
        ("the dialog, told again", 41),
        ("after", None),
    ]
    outbox.put_back_new(batches[1])
    (again,) = [batch for _at, batch in drain(outbox, start=100.0)]
    assert (again.text, again.edit, again.buttons) == ("the dialog, told again", None, BUTTONS)
