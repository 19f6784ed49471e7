"""A hook's state stands against the pane unless the pane shows stronger evidence; `unknown` never wins."""

from __future__ import annotations

import pytest

from worker.tmux.state_authority import ended_not_drawn, pane_may_set

CASES = {
    "hook-complete-vs-unknown": ("complete", "hook", "unknown", False),
    "pane-complete-vs-unknown": ("complete", "", "unknown", False),
    "creating-vs-unknown": ("creating", "", "unknown", False),
    "creating-then-running": ("creating", "", "running", True),
    "creating-then-a-dialog": ("creating", "", "permission", True),
    "no-state-vs-unknown": ("", "", "unknown", True),
    "hook-complete-vs-waiting": ("complete", "hook", "waiting", False),
    "hook-complete-next-turn-runs": ("complete", "hook", "running", True),
    "hook-waiting-pane-gone": ("waiting", "hook", "stopped", True),
    "hook-error-vs-waiting": ("error", "hook", "waiting", False),
    "hook-permission-dialog-answered": ("permission", "hook", "waiting", True),
    "hook-permission-vs-creating": ("permission", "hook", "creating", False),
    "hook-complete-then-a-dialog": ("complete", "hook", "permission", True),
    "hook-running-turn-ended": ("running", "hook", "waiting", True),
    "pane-state-follows-pane": ("waiting", "", "complete", True),
    "same-state": ("running", "", "running", False),
}


@pytest.mark.parametrize(("current", "by", "seen", "allowed"), CASES.values(), ids=CASES.keys())
def test_pane_may_set(current: str, by: str, seen: str, allowed: bool) -> None:
    assert pane_may_set(current, by, seen) is allowed


TOLD_NOT_DRAWN = {
    "the-turn-still-on-screen": ("running", False),  # Claude Code runs the hook, then draws the dialog
    "compacting-still-on-screen": ("compacting", False),
    "the-turn-ended": ("waiting", True),  # not a dialog coming: the turn is over
    "gone": ("stopped", True),
}


@pytest.mark.parametrize(("seen", "allowed"), TOLD_NOT_DRAWN.values(), ids=TOLD_NOT_DRAWN.keys())
def test_a_dialog_told_but_not_drawn_yet_stands_against_the_turn(seen: str, allowed: bool) -> None:
    assert pane_may_set("permission", "hook", seen, told_not_drawn=True) is allowed


def test_once_drawn_and_gone_the_turn_wins() -> None:
    assert pane_may_set("permission", "hook", "running", told_not_drawn=False)


ENDED_NOT_DRAWN = {
    "a-turn-end-told-just-now": ("complete", "hook", 0.5, True),
    "waiting-told-just-now": ("waiting", "hook", 2.9, True),
    "long-ago": ("complete", "hook", 3.0, False),
    "told-by-the-pane": ("complete", "", 0.5, False),
    "still-running": ("running", "hook", 0.5, False),
    "a-dialog-has-its-own-rule": ("permission", "hook", 0.5, False),
    "stopped": ("stopped", "hook", 0.5, False),
    "a-clock-gone-back": ("complete", "hook", -5.0, False),
}


@pytest.mark.parametrize(
    ("current", "by", "ago", "expected"), ENDED_NOT_DRAWN.values(), ids=ENDED_NOT_DRAWN.keys()
)
def test_a_turn_end_told_moments_ago_is_not_drawn_yet(
    current: str, by: str, ago: float, expected: bool
) -> None:
    assert ended_not_drawn(current, by, 1000.0 - ago, 1000.0) is expected


def test_the_turn_still_on_screen_after_a_told_end_does_not_undo_it() -> None:
    told = ended_not_drawn("complete", "hook", 999.5, 1000.0)
    assert not pane_may_set("complete", "hook", "running", told_not_drawn=told)
    assert pane_may_set("complete", "hook", "running", told_not_drawn=False)  # seconds later: the next turn
    assert pane_may_set("complete", "hook", "permission", told_not_drawn=told)  # a dialog no hook told
    assert pane_may_set("complete", "hook", "stopped", told_not_drawn=told)
