"""The live status line in the outbox, on a fake clock: it never holds an event up, the latest text
wins, it moves to the bottom when something goes below it, and it leaves the events' share of the
minute; and the activity it shows, folded from output items."""

from __future__ import annotations

import pytest

from bot.delivery.outbound import Batch, Limits, Outbox, Outgoing
from bot.delivery.status_lines import STATUS_EVERY, STATUS_RESERVE
from bus.events.activity import (
    Activity,
    activity_line,
    duration,
    end_turn,
    ends_turn,
    fold,
    fold_item,
    item_time,
    kilo,
    tool_doing,
)

CHAT = -100
MINUTE = Limits(window=60.0)  # Telegram's minute, without the bot's margin of a second


def send(outbox: Outbox, now: float, message_id: int = 0) -> Batch:
    batch = outbox.take(now) or pytest.fail(f"nothing to send at {now}")
    outbox.sent(batch, now, message_id or None)
    return batch


def test_the_latest_status_wins_and_waits_for_nothing_else() -> None:
    outbox = Outbox(MINUTE)
    outbox.set_status(CHAT, 5, "⚙ Read a.py · 1s")
    outbox.set_status(CHAT, 5, "⚙ Read b.py · 2s")
    outbox.put(Outgoing(CHAT, 5, "→ agent-1 spawned"))
    first = send(outbox, 0.0, 10)
    assert first.status is None  # the event first
    second = send(outbox, 1.0, 11)
    assert (second.status is not None, second.edit, second.text) == (True, None, "⚙ Read b.py · 2s")
    assert outbox.take(2.0) is None  # nothing more: what is shown is what is wanted


def test_a_status_change_waits_for_its_interval_then_edits_in_place() -> None:
    outbox = Outbox(MINUTE)
    outbox.set_status(CHAT, 5, "one")
    send(outbox, 0.0, 10)
    outbox.set_status(CHAT, 5, "two")
    assert outbox.take(5.0) is None
    assert outbox.wait(5.0) == pytest.approx(STATUS_EVERY - 5.0)
    edit = send(outbox, STATUS_EVERY)
    assert (edit.edit, edit.text) == (10, "two")


def test_an_event_right_after_a_status_change_goes_at_once() -> None:
    outbox = Outbox(MINUTE)
    outbox.set_status(CHAT, 5, "working")
    send(outbox, 0.0, 10)
    outbox.put(Outgoing(CHAT, 5, "❓ agent-1 asks"))
    assert outbox.wait(0.01) == 0.0
    send(outbox, 0.01, 11)
    outbox.put(Outgoing(CHAT, 5, "next"))
    assert outbox.wait(0.02) == pytest.approx(0.99)  # then the usual one a second


def test_a_status_change_leaves_the_events_share_of_the_minute() -> None:
    outbox = Outbox(MINUTE)
    for i in range(20 - STATUS_RESERVE):
        outbox.put(Outgoing(CHAT, 100 + i, f"event {i}"))
        send(outbox, float(i), 100 + i)
    now = float(20 - STATUS_RESERVE)
    outbox.set_status(CHAT, 5, "working")
    assert outbox.take(now) is None  # the status waits for the window...
    outbox.put(Outgoing(CHAT, 6, "an event"))
    assert send(outbox, now, 50).text == "an event"  # ...an event does not
    # 16 spent now: the status waits until only 14 are left in the window (the second leaves at 61).
    assert outbox.wait(now + 1) == pytest.approx(61.0 - (now + 1))


def test_a_message_below_moves_the_status_to_the_bottom() -> None:
    outbox = Outbox(MINUTE)
    outbox.set_status(CHAT, 5, "one")
    send(outbox, 0.0, 10)
    outbox.put(Outgoing(CHAT, 5, "✓ task done"))
    send(outbox, 1.0, 11)
    outbox.set_status(CHAT, 5, "two")
    assert outbox.take(STATUS_EVERY - 1) is None  # a move is a change: it waits for its interval
    tidy = send(outbox, STATUS_EVERY)
    assert tidy.delete == 10 and not tidy.counted  # the old line goes first: never two lines at once
    pause = outbox.wait(STATUS_EVERY)
    assert pause is not None
    moved = send(outbox, STATUS_EVERY + pause, 12)  # then the new one, at the bottom
    assert (moved.edit, moved.delete, moved.text) == (None, None, "two")
    assert outbox.take(STATUS_EVERY + 2) is None


def test_the_end_of_a_turn_removes_the_status_line() -> None:
    outbox = Outbox(MINUTE)
    outbox.set_status(CHAT, 5, "working")
    send(outbox, 0.0, 10)
    outbox.set_status(CHAT, 5, "")
    removal = send(outbox, 1.0)
    assert removal.delete == 10
    assert outbox.take(2.0) is None
    outbox.set_status(CHAT, 5, "working")  # the next turn: a new line, not an edit of the deleted one
    again = send(outbox, 1.0 + STATUS_EVERY, 11).status
    assert again is not None and (again.edit, again.delete, again.text) == (None, None, "working")


def test_the_line_goes_before_the_end_of_the_turn_shows() -> None:
    outbox = Outbox(MINUTE)
    outbox.set_status(CHAT, 5, "working")
    send(outbox, 0.0, 10)
    outbox.put(Outgoing(CHAT, 5, "⏳ agent-1 is waiting"))
    outbox.set_status(CHAT, 5, "")
    assert send(outbox, 0.5).delete == 10  # first, so the line never shows beside what replaces it
    assert send(outbox, 1.0, 11).text == "⏳ agent-1 is waiting"


def test_a_removal_spends_nothing_and_waits_for_no_window() -> None:
    outbox = Outbox(MINUTE)
    outbox.set_status(CHAT, 5, "working")
    send(outbox, 0.0, 10)
    for i in range(19):  # with the line, the minute is spent
        outbox.put(Outgoing(CHAT, 100 + i, f"event {i}"))
        send(outbox, 1.0 + i, 100 + i)
    outbox.put(Outgoing(CHAT, 7, "one too many"))
    outbox.set_status(CHAT, 5, "")
    assert send(outbox, 21.0).delete == 10
    outbox.hold(CHAT, 30.0)  # Telegram said to wait: that holds for deletions too
    outbox.set_status(CHAT, 6, "other")
    outbox.adopt_status(CHAT, 6, 50)
    outbox.set_status(CHAT, 6, "")
    assert outbox.take(22.0) is None and outbox.wait(22.0) == pytest.approx(8.0)


def test_a_status_message_deleted_by_someone_is_sent_again() -> None:
    outbox = Outbox(MINUTE)
    outbox.set_status(CHAT, 5, "one")
    send(outbox, 0.0, 10)
    outbox.set_status(CHAT, 5, "two")
    edit = outbox.take(STATUS_EVERY) or pytest.fail("nothing to send")
    outbox.status_failed(edit, STATUS_EVERY, gone=True)
    again = outbox.take(STATUS_EVERY + 1) or pytest.fail("nothing to send")
    assert (again.edit, again.text) == (None, "two")


# --- the activity ------------------------------------------------------------------------------------

T0 = 1_000_000.0


def test_a_turn_folds_into_what_the_agent_does_now() -> None:
    a = fold(Activity(), "tool_use", "**Read**(a.py)", "Read", T0)
    assert not a.working  # no turn started: output of an old turn changes nothing
    a = fold(a, "prompt", "", "", T0)
    a = fold(a, "tool_use", "**Read**(src/app.py)", "Read", T0 + 5)
    assert activity_line(a, T0 + 17) == "⚙ Read src/app.py · 12s — turn 17s, 1 tool"
    a = fold(a, "tool_result", "Read 45 lines", "Read", T0 + 18)
    a = fold(a, "tool_use", "**Bash**(pytest -q)", "Bash", T0 + 20)
    assert activity_line(a, T0 + 200) == "⚙ Bash pytest -q · 3m00s — turn 3m20s, 2 tools"
    a = fold(a, "text", "Done.", "", T0 + 201)
    assert activity_line(a, T0 + 203) == "⚙ thinking · 2s — turn 3m23s, 2 tools"
    assert activity_line(end_turn(a), T0 + 204) == ""
    a = fold(a, "prompt", "", "", T0 + 300)
    a = fold(a, "text", "On it.", "", T0 + 301, tokens=45_300)
    assert activity_line(a, T0 + 303) == "⚙ thinking · 2s — turn 3s, 0 tools · 45k tokens"
    assert fold(a, "prompt", "", "", T0 + 400).tokens == 45_300  # the context outlives the turn


@pytest.mark.parametrize(("n", "shown"), [(812, "812"), (45_300, "45k"), (1_234_567, "1.2M")])
def test_kilo(n: int, shown: str) -> None:
    assert kilo(n) == shown


ENDS = [
    ("complete", "complete", {}, True),
    ("waiting", "waiting", {}, True),
    ("question", "question", {}, True),
    ("killed", "killed", {}, True),
    ("api-error", "error", {"kind": "overloaded"}, True),
    ("pane-waiting", "state", {"to_state": "waiting"}, True),
    ("pane-turn-ended-by-429", "state", {"to_state": "rate_limited"}, True),
    ("pane-running", "state", {"to_state": "running"}, False),
    ("task-claimed", "task_claimed", {}, False),
]


@pytest.mark.parametrize(("kind", "data", "ends"), [e[1:] for e in ENDS], ids=[e[0] for e in ENDS])
def test_what_ends_a_turn(kind: str, data: dict[str, object], ends: bool) -> None:
    assert ends_turn(kind, data) is ends


@pytest.mark.parametrize(
    ("text", "expected"),
    [("**Read**(a.py)", "Read a.py"), ("**TodoWrite**()", "TodoWrite"), ("odd text", "odd text")],
)
def test_tool_doing(text: str, expected: str) -> None:
    assert tool_doing(text) == expected


@pytest.mark.parametrize(
    ("seconds", "shown"), [(0, "0s"), (59.9, "59s"), (61, "1m01s"), (3725, "1h02m"), (-3, "0s")]
)
def test_duration(seconds: float, shown: str) -> None:
    assert duration(seconds) == shown


def test_item_time() -> None:
    assert item_time("2026-11-25T14:30:05.500Z", 0.0) == pytest.approx(1795617005.5)
    assert item_time("", 7.0) == 7.0 and item_time("garbage", 7.0) == 7.0


@pytest.mark.parametrize(
    ("usd", "shown"),
    [
        ("0.004200", " · $0.0042"),
        ("0.420000", " · $0.42"),
        ("12.3", " · $12.30"),
        ("", ""),
        ("-1", ""),
        ("x", ""),
    ],
    ids=["under-a-cent", "cents", "dollars", "none", "negative", "garbage"],
)
def test_the_status_line_ends_with_the_agent_cost(usd: str, shown: str) -> None:
    """The transcript tail puts the agent's cost so far on the answers it reads; a prompt keeps it."""
    started = fold_item(Activity(), {"kind": "prompt", "ts": ""}, T0)
    answer = {"kind": "text", "text": "On it.", "ts": "", "tokens": "45300", "usd": usd}
    a = fold_item(started, answer, T0 + 1)
    assert activity_line(a, T0 + 3) == "⚙ thinking · 2s — turn 3s, 0 tools · 45k tokens" + shown
    assert fold_item(a, {"kind": "prompt", "ts": ""}, T0 + 9).usd == a.usd  # the next turn starts from it
