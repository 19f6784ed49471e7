"""A turn's end in the agent's topic comes after the turn's last words, shown once: the transcript's copy
when the worker's tail has it, else the hook's copy as soon as the tail went through the turn without
it; the transcript's later copy is then not shown again. A cut copy waits for the transcript's full
text, up to the deadline. What comes for the topic meanwhile keeps its order."""

from __future__ import annotations

import pytest

from bot.feeds.last_words import CUT, HOLD_SECONDS, LastWords, Release, seconds, stream_id, words_tail

AGENT, TOPIC, OTHER = "agent-1", 5, 6
NOW = 100.0
END = "1795716005123-0"  # the end event's id
ENDED = "2026-11-26T18:00:05+00:00"  # and its time
BEFORE = "2026-11-26T18:00:04.870Z"  # the transcript's time of the turn's last text
NEXT_TURN = "2026-11-26T18:00:07.100Z"


def test_the_transcripts_copy_read_first_lets_the_end_go_at_once() -> None:
    held: LastWords[str] = LastWords()
    assert not held.repeats(AGENT, "text", "All done.\n", BEFORE)
    assert held.said(AGENT, "All done.\n") == []
    assert held.hold(TOPIC, "⏳ waiting", AGENT, "All  done.", END, ENDED, NOW) == [Release("⏳ waiting")]
    assert held.through(AGENT, END) == []
    assert not held.repeats(AGENT, "text", "All done.", NEXT_TURN)  # the next turn says it again


def test_the_end_read_first_waits_for_its_turns_output_and_goes_below_it() -> None:
    held: LastWords[str] = LastWords()
    assert held.hold(TOPIC, "⏳ waiting", AGENT, "All done.", END, ENDED, NOW) == []
    assert not held.repeats(AGENT, "tool_use", "**Bash**(make)", BEFORE)
    assert not held.repeats(AGENT, "text", "All done.", BEFORE)
    assert held.said(AGENT, "All done.") == [Release("⏳ waiting")]
    assert held.through(AGENT, END) == []
    assert held.next_deadline() is None


def test_a_transcript_without_the_words_yet_lets_the_end_go_after_the_hooks_copy() -> None:
    held: LastWords[str] = LastWords()
    words = "First part.\n\nAll done."
    assert held.hold(TOPIC, "⏳ waiting", AGENT, words, END, ENDED, NOW) == []
    assert held.through(AGENT, END) == [Release("⏳ waiting", words)]
    # the transcript's copy, a tick later, in two text blocks: not shown again
    assert held.repeats(AGENT, "text", "First part.", BEFORE)
    assert held.said(AGENT, "First part.") == []
    assert held.repeats(AGENT, "text", "All  done.\n", BEFORE)
    assert held.said(AGENT, "All  done.\n") == []
    assert not held.repeats(AGENT, "text", "All done.", BEFORE)  # its copy came: the next one is new
    # and it ends no later turn: the next end waits for its own words
    assert held.hold(TOPIC, "✓ completed", AGENT, "All done.", "1795716009000-0", ENDED, NOW) == []


def test_the_tail_read_before_the_end_lets_it_go_at_once() -> None:
    held: LastWords[str] = LastWords()
    assert held.through(AGENT, END) == []
    assert held.hold(TOPIC, "⏳ waiting", AGENT, "Ship it?", END, ENDED, NOW) == [
        Release("⏳ waiting", "Ship it?")
    ]
    # an earlier turn's through-item is not this end's
    assert held.hold(TOPIC, "✓ completed", AGENT, "Shipped.", "1795716009000-0", ENDED, NOW) == []


def test_a_later_turns_words_are_shown_though_the_copy_never_came() -> None:
    held: LastWords[str] = LastWords()
    held.hold(TOPIC, "⏳ waiting", AGENT, "Which one, A or B?", END, ENDED, NOW)
    held.through(AGENT, END)
    assert not held.repeats(AGENT, "prompt", "", NEXT_TURN)
    assert not held.repeats(AGENT, "text", "A or B", NEXT_TURN)


def test_what_comes_for_the_topic_behind_a_held_end_keeps_its_order() -> None:
    held: LastWords[str] = LastWords()
    assert held.hold(TOPIC, "⏳ waiting", AGENT, "All done.", END, ENDED, NOW) == []
    assert held.hold(TOPIC, "✓ task done", "agent-2", "Merged.", "1795716005200-0", ENDED, NOW) == []
    assert held.hold(TOPIC, "📌 note", AGENT, "", "1795716005300-0", ENDED, NOW) == []
    assert held.hold(OTHER, "elsewhere", AGENT, "", "1795716005400-0", ENDED, NOW) == [Release("elsewhere")]
    assert held.through("agent-2", "1795716005200-0") == []  # behind the first
    assert held.said(AGENT, "All done.") == [
        Release("⏳ waiting"),
        Release("✓ task done", "Merged."),
        Release("📌 note"),
    ]
    assert held.next_deadline() is None


def test_without_the_tail_the_end_goes_after_the_hooks_copy_at_the_deadline() -> None:
    held: LastWords[str] = LastWords()
    held.hold(TOPIC, "⏳ waiting", AGENT, "All done.", END, ENDED, NOW)
    assert held.next_deadline() == NOW + HOLD_SECONDS
    assert held.due(NOW + HOLD_SECONDS - 1) == []
    assert held.due(NOW + HOLD_SECONDS) == [Release("⏳ waiting", "All done.")]
    assert held.repeats(AGENT, "text", "All done.", BEFORE)  # the worker came back


def test_a_cut_copy_waits_for_the_full_text_then_shows_marked_and_the_full_text_still_shows() -> None:
    held: LastWords[str] = LastWords()
    cut = "y" * (CUT - 9) + " the end."  # as long as the hook keeps: maybe cut
    assert held.hold(TOPIC, "⏳ waiting", AGENT, cut, END, ENDED, NOW) == []
    assert held.through(AGENT, END) == []
    assert held.due(NOW + HOLD_SECONDS - 1) == []
    assert held.due(NOW + HOLD_SECONDS) == [Release("⏳ waiting", "…" + cut)]
    assert not held.repeats(AGENT, "text", "The beginning. " + cut, BEFORE)  # nothing of it is lost


def test_a_cut_copys_full_text_in_time_lets_the_end_go_alone() -> None:
    held: LastWords[str] = LastWords()
    full = "The beginning. " + "z" * CUT
    assert held.hold(TOPIC, "⏳ waiting", AGENT, full[-CUT:], END, ENDED, NOW) == []
    assert held.said("agent-2", full) == []  # another agent's words release nothing
    assert held.said(AGENT, full) == [Release("⏳ waiting")]


def test_the_end_of_a_turn_with_no_words_waits_for_nothing() -> None:
    held: LastWords[str] = LastWords()
    assert held.hold(TOPIC, "⏳ waiting", AGENT, "  \n", END, ENDED, NOW) == [Release("⏳ waiting")]
    assert not held.repeats(AGENT, "text", "Anything.", BEFORE)


@pytest.mark.parametrize(
    ("text", "tail"),
    [("short", "short"), ("  spaced \n out\t", "spaced out"), ("x" * 100 + "end", "x" * 77 + "end")],
    ids=["short", "whitespace", "long"],
)
def test_words_tail(text: str, tail: str) -> None:
    assert words_tail(text) == tail


@pytest.mark.parametrize(
    ("ts", "unix"),
    [(ENDED, 1795716005.0), ("2026-11-26T18:00:05.500Z", 1795716005.5), ("", None), ("18:00", None)],
    ids=["event", "transcript", "none", "no-date"],
)
def test_seconds(ts: str, unix: float | None) -> None:
    assert seconds(ts) == unix


@pytest.mark.parametrize(
    ("entry", "order"),
    [(END, (1795716005123, 0)), ("1795716005123-7", (1795716005123, 7)), ("", (0, 0)), ("x-1", (0, 0))],
    ids=["id", "seq", "none", "not-an-id"],
)
def test_stream_id(entry: str, order: tuple[int, int]) -> None:
    assert stream_id(entry) == order
