"""pane_state() on every capture in tests/fixtures/pane-states (the expected state is the file name's
text before the first hyphen) and on small inline cases, most of them markers that must not count."""

from __future__ import annotations

import unicodedata
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.fake_anthropic.client import CLAUDE_CODE_VERSION
from worker.tmux.pane_state import COMPLETION_MARKER, PaneState, pane_state

CAPTURES = sorted((Path(__file__).resolve().parent.parent / "fixtures" / "pane-states").glob("*.txt"))
RULE = "─" * 60
FOOTER = f"{RULE}\n❯ \n{RULE}\n  repo | Opus 4.6\n  agent/agent-1f2e3d4c\n"
LOGO = " ▐▛███▜▌   Claude Code v2.1.50\n▝▜█████▛▘  Opus 4.6 · Claude Max\n"


IDLE = f"{RULE}\n❯ \n{RULE}\n  ⏸ manual mode on · ? for shortcuts · ← for agents\n"
BUSY = f"{RULE}\n❯ \n{RULE}\n  ⏸ manual mode on · esc to interrupt · ← for agents\n"
AUTO_IDLE = f"{RULE}\n❯ \n{RULE}\n  ⏵⏵ auto mode on (shift+tab to cycle)\n"
DONE = COMPLETION_MARKER


def _width(text: str) -> int:
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def _with_diff_panel(conversation: str, column: int = 60) -> str:
    """The conversation on the left, the diff panel right of a "│" at `column`, the input box below."""
    right = ["1 file changed   /diff to close", "", "notes.txt", "+ first line", "+ second line"]
    rows = [*conversation.splitlines(), *[""] * 8]
    lines = [
        row + " " * (column - _width(row)) + "│" + (right[i] if i < len(right) else "")
        for i, row in enumerate(rows)
    ]
    return "\n".join(lines) + "\n" + IDLE


def _filler(count: int) -> str:
    return "".join(f"  line {n} of later output\n" for n in range(1, count + 1))


def _expected(path: Path) -> PaneState:
    return PaneState(path.name.partition("-")[0])


@pytest.mark.parametrize("path", CAPTURES, ids=[path.name for path in CAPTURES])
def test_capture_gives_the_state_in_its_name(path: Path) -> None:
    assert pane_state(path.read_text(encoding="utf-8")) == _expected(path)


def test_captures_cover_every_state_the_parser_returns() -> None:
    covered = {_expected(path) for path in CAPTURES}
    assert covered == set(PaneState)


def test_current_cli_captures_cover_every_state_and_three_widths() -> None:
    current = [path for path in CAPTURES if f"-cc{CLAUDE_CODE_VERSION}-" in path.name]
    assert {_expected(path) for path in current} == set(PaneState) - {PaneState.UNKNOWN}
    assert {path.stem.rpartition("-w")[2] for path in current} == {"80", "100", "200"}


INLINE_CASES = [
    # completion marker: only in capitals, only as a line of its own, only recent, only from the agent
    ("marker-alone", f"{COMPLETION_MARKER}\n", "complete"),
    ("marker-after-bullet", f"⏺ {COMPLETION_MARKER}\n", "complete"),
    ("marker-indented-with-trailing-spaces", f"    {COMPLETION_MARKER}   \n", "complete"),
    ("marker-above-footer", f"⏺ Done.\n\n  {COMPLETION_MARKER}\n\n✻ Baked for 1m 2s\n\n{FOOTER}", "complete"),
    ("marker-15-lines-up", f"{COMPLETION_MARKER}\n{_filler(14)}", "complete"),
    ("marker-16-lines-up", f"{COMPLETION_MARKER}\n{_filler(15)}", "unknown"),
    ("marker-in-sentence", f"I will say {COMPLETION_MARKER} when the tests pass.\n", "unknown"),
    ("marker-with-trailing-words", f"{COMPLETION_MARKER}, almost\n", "unknown"),
    ("marker-quoted", f"End with '{COMPLETION_MARKER}'.\n", "unknown"),
    ("marker-lowercase", "i have completed the goal\n", "unknown"),
    ("marker-title-case", "  I Have Completed The Goal\n", "unknown"),
    ("marker-in-prompt", f"{LOGO}\n❯ [USER TASK] Fix it. Finish with\n\n  {COMPLETION_MARKER}\n", "unknown"),
    ("marker-in-input-box", f"⏺ Shall I go on?\n\n{RULE}\n❯ say\n  {COMPLETION_MARKER}\n{RULE}\n", "unknown"),
    ("marker-then-new-prompt", f"  {COMPLETION_MARKER}\n\n❯ Also update the docs.\n\n⏺ On it.\n", "running"),
    ("marker-prompt-marker", f"{COMPLETION_MARKER}\n❯ and now?\n⏺ {COMPLETION_MARKER}\n", "complete"),
    # waiting marker: the same rules; the latest marker decides
    ("waiting-alone", "WAITING\n", "waiting"),
    ("waiting-in-sentence", "I am WAITING for the workers.\n", "unknown"),
    ("waiting-quoted", "say 'WAITING' when idle\n", "unknown"),
    ("waiting-title-case", "  Waiting\n", "unknown"),
    ("waiting-after-complete", f"{COMPLETION_MARKER}\n❯ one question\n⏺ Which one?\n  WAITING\n", "waiting"),
    ("complete-after-waiting", f"WAITING\n❯ go on\n⏺ Done.\n  {COMPLETION_MARKER}\n", "complete"),
    ("tool-held-for-user", "⏺ Bash(make deploy)\n  ⎿  Waiting…\n\n✻ Philosophising…\n", "waiting"),
    # work in progress
    ("tool-running-beats-marker", f"{COMPLETION_MARKER}\n  ⎿  Running (esc to interrupt)\n", "running"),
    ("spinner-with-interrupt-hint", "✻ Simmering… (ctrl+c to interrupt · 2m 13s)\n", "running"),
    ("interrupt-hint-6-lines-up", "· Simmering… (esc to interrupt)\na\nb\nc\nd\nWAITING\n", "waiting"),
    ("interrupt-hint-in-prose", 'Press "esc to interrupt" to stop a tool.\n', "unknown"),
    ("background-tool-is-not-active", "  ⎿  Running in the background (shift+↑ to manage)\n", "unknown"),
    ("spinner-streaming-tokens", "✳ Fluttering… (46s · ↓ 2.6k tokens)\n", "running"),
    ("spinner-without-summary", "✽ Adding arrow key support…\n", "running"),
    ("spinner-finished", "✻ Brewed for 6m 20s\n", "unknown"),
    ("spinner-summary-without-tokens", "· Fluttering… (thought for 13s)\n", "unknown"),
    ("tmux-passthrough", "ctrl+b ctrl+b\n", "running"),
    ("background-tasks-in-status-bar", f"⏺ Started.\n\n{FOOTER}  ⏵⏵ · 3 background tasks\n", "running"),
    ("background-tasks-and-waiting", f"  WAITING\n\n{FOOTER}  ⏵⏵ · 2 bashes\n", "waiting"),
    ("compacting-beats-running", "✽ Compacting conversation… (esc to interrupt)\n", "compacting"),
    # rate limits
    ("rate-limit-api-error", '  ⎿  API Error: 429 {"error":{"type":"rate_limit_error"}}\n', "rate_limited"),
    ("hit-your-limit", "You've hit your limit · resets 3pm (Europe/Berlin)\n", "rate_limited"),
    ("rate-limit-beats-marker", f"Claude usage limit reached.\n{COMPLETION_MARKER}\n", "rate_limited"),
    ("rate-limit-discussed", "We should handle the usage limit gracefully.\n", "unknown"),
    ("rate-limit-in-prompt", f"{LOGO}❯ Detect\n  Claude usage limit reached.\n", "unknown"),
    # start-up
    ("trust-dialog", " Do you trust this folder?\n\n Enter to confirm · Esc to cancel\n", "permission"),
    ("trust-dialog-then-logo", f" Enter to confirm · Esc to cancel\n{LOGO}\n⏺ Reading.\n", "unknown"),
    ("welcome-box", "╭─ Claude Code ─╮\n│  Welcome back Ada!  │\n╰───────────────╯\n❯ wait\n", "creating"),
    # screen layout: only a rule pair around a "❯" line near the bottom is the input box
    ("ends-with-a-rule", f"  WAITING\n\n{RULE}", "waiting"),
    ("far-rule-not-input-box", f"{RULE}\n❯ ok\n⏺ WAITING\n{_filler(9)}{RULE}\n  repo\n", "waiting"),
    ("rule-with-much-below-it", f"{RULE}\n{_filler(9)}  WAITING\n", "waiting"),
    ("empty", "", "unknown"),
    ("blank-lines", "\n  \n\n", "unknown"),
    # the current UI (2.1.332): ● bullets, status-bar hints, the diff panel, dialogs, API errors
    ("bullet-marker-alone", f"● {DONE}\n", "complete"),
    ("bullet-waiting-alone", "● WAITING\n", "waiting"),
    ("status-bar-esc-to-interrupt", f"❯ fix it\n\n✶ Embellishing…\n\n{BUSY}", "running"),
    ("status-bar-busy-beats-old-marker", f"● Done.\n\n  {DONE}\n\n❯ more\n\n{BUSY}", "running"),
    ("bash-command-running", "● Waiting.\n\n  Wait for the build · 2s\n  ⎿  $ sleep 30\n", "running"),
    ("bash-command-and-spinner", "● Wait for the build\n  ⎿  $ sleep 30\n\n✻ Garnishing…\n", "running"),
    (
        "bash-command-refused",
        f"● Did not run 1 call\n  ⎿  $ rm -rf b\n  ⎿  Interrupted · What should Claude do instead?\n\n{IDLE}",
        "waiting",
    ),
    ("star-spinner", "* Pondering…\n", "running"),
    ("idle-without-marker", f"● Shall I go on?\n\n{IDLE}", "waiting"),
    ("idle-auto-mode-turn-done", f"● Done.\n\n✻ Worked for 1s · done 2:29 AM\n\n{AUTO_IDLE}", "waiting"),
    ("idle-older-ui-proves-nothing", f"⏺ Shall I go on?\n\n{FOOTER}", "unknown"),
    ("marker-prompt-then-spinner", f"● Hi.\n\n  {DONE}\n\n❯ more\n\n✶ Pondering…\n\n{IDLE}", "running"),
    ("marker-prompt-then-idle", f"● Hi.\n\n  {DONE}\n\n❯ /compact\n  ⎿  Compacted\n\n{IDLE}", "waiting"),
    (
        "after-escape",
        f"● Thinking.\n  ⎿  Interrupted · What should Claude do instead?\n\n{AUTO_IDLE}",
        "waiting",
    ),
    ("api-error-529", f"❯ go\n\n● API Error: 529 Overloaded. Try again.\n\n{IDLE}", "error"),
    ("api-error-429", "● API Error: Request rejected (429) · would exceed the rate limit\n", "rate_limited"),
    (
        "api-error-then-resent",
        f"● API Error: 529 Overloaded.\n\n❯ again\n\n● Ok.\n\n  {DONE}\n\n{IDLE}",
        "complete",
    ),
    (
        "retrying-429",
        f"✻ 429 This request would exceed… · retrying in 2s · attempt 3/10\n\n{BUSY}",
        "running",
    ),
    ("retrying-api-error", f"✻ API error · retrying in 2s · attempt 1/10\n\n{BUSY}", "running"),
    ("retrying-quoted-in-reply", f"● It shows: retrying in 2s · attempt 1/10\n\n{IDLE}", "waiting"),
    (
        "permission-dialog",
        "● Bash(rm -rf build)\n\n Do you want to proceed?\n ❯ 1. Yes\n   2. No\n\n Esc to cancel\n",
        "permission",
    ),
    (
        "old-dialog-above-input-box",
        f" ❯ 1. Yes, proceed\n   2. No, exit\n\n Enter to confirm · Esc to cancel\n\n● Hi.\n\n{IDLE}",
        "waiting",
    ),
    ("dialog-quoted-in-reply", f"● The dialog asks:\n  Do you want to proceed?\n\n{IDLE}", "waiting"),
    (
        "pane-is-dead",
        "Resume this session with:\nclaude --resume 1f2e\n\n\nPane is dead (status 0, Thu Nov 26)\n",
        "stopped",
    ),
    ("shell-prompt-after-exit", "Resume this session with:\nclaude --resume 1f2e\n$ \n", "stopped"),
    ("user-host-shell-prompt", "me@box:~/repo$ \n", "stopped"),
    ("bash-version-shell-prompt", "Resume this session with:\nclaude --resume 1f2e\nbash-5.2$ \n", "stopped"),
    ("dollar-amount-is-no-prompt", "● It costs 5 $\n", "unknown"),
    ("dollar-line-in-conversation", f"● Type this:\n  $\n\n{IDLE}", "waiting"),
    ("blank-pane", "\n" * 50, "creating"),
    (
        "diff-panel-marker",
        _with_diff_panel(f"● Wrote notes.txt.\n\n  {DONE}\n\n✻ Worked for 1s · done 2:29 AM"),
        "complete",
    ),
    ("diff-panel-wide-chars", _with_diff_panel(f"● 日本語を書いた。\n\n  {DONE}"), "complete"),
    ("diff-panel-waiting", _with_diff_panel("● Which colour?\n\n  WAITING"), "waiting"),
    ("box-in-conversation-is-no-panel", "● Plan:\n" + "  │ step │\n" * 12 + f"\n  {DONE}\n", "complete"),
]


@pytest.mark.parametrize(
    ("text", "expected"),
    [(text, expected) for _, text, expected in INLINE_CASES],
    ids=[case_id for case_id, _, _ in INLINE_CASES],
)
def test_inline_case(text: str, expected: str) -> None:
    assert pane_state(text) == PaneState(expected)


_WORDS = st.text(alphabet=st.characters(categories=["L", "N", "P"]), min_size=1, max_size=20)


@given(before=_WORDS, after=_WORDS)
def test_marker_inside_a_sentence_is_never_complete(before: str, after: str) -> None:
    assert pane_state(f"{before} {COMPLETION_MARKER} {after}\n") != PaneState.COMPLETE


@given(text=st.text(max_size=400))
def test_any_text_gives_a_state(text: str) -> None:
    assert pane_state(text) in set(PaneState)
