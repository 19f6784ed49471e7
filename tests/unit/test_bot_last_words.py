"""A turn's end waits in the agent's topic for the turn's last words, whichever is read first; what
comes for that topic meanwhile waits behind it, and a deadline lets it go when the words never come."""

from __future__ import annotations

import pytest

from bot.last_words import LastWords, words_tail

AGENT, TOPIC, OTHER = "agent-1", 5, 6
LATER = 100.0


def test_words_already_queued_let_the_end_go_at_once() -> None:
    held: LastWords[str] = LastWords()
    assert held.said(AGENT, "All done.\n") == []
    assert held.hold(TOPIC, "⏳ waiting", AGENT, "All  done.", LATER) == ["⏳ waiting"]


def test_the_end_waits_for_its_words_and_what_follows_waits_behind_it() -> None:
    held: LastWords[str] = LastWords()
    assert held.hold(TOPIC, "⏳ waiting", AGENT, "First part.\n\nAll done.", LATER) == []
    assert held.hold(TOPIC, "✓ task done", AGENT, "", LATER) == []  # behind it, in order
    assert held.hold(OTHER, "elsewhere", AGENT, "", LATER) == ["elsewhere"]
    assert held.said(AGENT, "First part.") == []
    # the message's last text block is the last item
    assert held.said(AGENT, "All done.") == ["⏳ waiting", "✓ task done"]
    assert held.next_deadline() is None


def test_words_of_another_agent_release_nothing() -> None:
    held: LastWords[str] = LastWords()
    held.hold(TOPIC, "⏳ waiting", AGENT, "All done.", LATER)
    assert held.said("agent-2", "All done.") == []


def test_the_deadline_lets_it_go_without_its_words() -> None:
    held: LastWords[str] = LastWords()
    held.hold(TOPIC, "⏳ waiting", AGENT, "All done.", LATER)
    held.hold(TOPIC, "✓ completed", AGENT, "Other words.", LATER + 5)
    assert held.next_deadline() == LATER
    assert held.due(LATER - 1) == []
    assert held.due(LATER) == ["⏳ waiting"]
    assert held.next_deadline() == LATER + 5
    assert held.said(AGENT, "Other words.") == ["✓ completed"]


@pytest.mark.parametrize(
    ("text", "tail"),
    [("short", "short"), ("  spaced \n out\t", "spaced out"), ("x" * 100 + "end", "x" * 77 + "end")],
    ids=["short", "whitespace", "long"],
)
def test_words_tail(text: str, tail: str) -> None:
    assert words_tail(text) == tail
