"""The Codex CLI screen parser on real captures of Codex 0.169.0 (tests/fixtures/codex-<version>, made by
`python -m tests.fake_openai.capture`; the expected state is the file name's text before the first
hyphen) and on small inline screens for what the captures do not show; its approval dialogs, their
options and the keys that answer them."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fake_openai.client import CODEX_VERSION
from worker.markers import COMPLETION_MARKER
from worker.programs.codex.screen import (
    codex_input_text,
    codex_option_keys,
    codex_pane_state,
    read_codex_dialog,
)
from worker.tmux.dialogs import DialogError, option_for_answer, pick
from worker.tmux.pane_state import PaneState

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / f"codex-{CODEX_VERSION}"
CAPTURES = sorted(FIXTURES.glob("*.txt"))
DIALOGS = [path for path in CAPTURES if path.name.startswith("permission-")]
APPROVALS = [path for path in DIALOGS if not path.name.startswith("permission-sign-in-")]
SIGN_IN = [path for path in DIALOGS if path not in APPROVALS]
HEADER = "╭──────────────╮\n│ >_ OpenAI Codex (v0.169.0) │\n│ /work/repo │\n╰──────────────╯\n\n"
FOOTER = "\n› Ask Codex to do anything\n\n  GPT-5.5 default · /work/repo\n  ← for agents · ? for shortcuts\n"


def _expected(path: Path) -> PaneState:
    return PaneState(path.name.partition("-")[0])


def _screen(conversation: str) -> str:
    return HEADER + conversation + "\n" + FOOTER + "\n" * 20


@pytest.mark.parametrize("path", CAPTURES, ids=[path.name for path in CAPTURES])
def test_capture_gives_the_state_in_its_name(path: Path) -> None:
    assert codex_pane_state(path.read_text(encoding="utf-8")) == _expected(path)


def test_captures_come_in_three_widths_and_cover_each_state_codex_shows() -> None:
    widths = {path.stem.rpartition("-w")[2] for path in CAPTURES}
    assert widths == {"80", "100", "200"}
    shown = {_expected(path) for path in CAPTURES}
    expected = {"creating", "waiting", "running", "complete", "permission", "error", "stopped"}
    assert shown == {PaneState(state) for state in expected}


@pytest.mark.parametrize(
    ("conversation", "state"),
    [
        pytest.param(
            "› fix it\n\n• Fixed.\n\n  I HAVE COMPLETED THE GOAL\n", PaneState.COMPLETE, id="marker"
        ),
        pytest.param(
            "› fix it\n\n• Fixed.\n  I HAVE COMPLETED THE GOAL and more", PaneState.WAITING, id="in-sentence"
        ),
        pytest.param(f"› end with {COMPLETION_MARKER}\n\n• On it.", PaneState.WAITING, id="quoted-by-user"),
        pytest.param(
            f"› fix it\n\n• {COMPLETION_MARKER}\n\n› and the docs\n\n• Which docs?",
            PaneState.WAITING,
            id="marker-of-an-earlier-turn",
        ),
        pytest.param(
            f"› fix it\n\n• {COMPLETION_MARKER}\n\n› and the docs\n\n• Working (2s • esc to interrupt)",
            PaneState.RUNNING,
            id="new-turn-running",
        ),
        pytest.param(
            "› go\n\n■ exceeded retry limit, last status: 429 Too Many Requests",
            PaneState.RATE_LIMITED,
            id="rate-limited",
        ),
        pytest.param("› go\n\n■ stream disconnected before completion", PaneState.ERROR, id="error"),
        pytest.param(
            "› go\n\n■ Conversation interrupted - tell the model", PaneState.WAITING, id="interrupted"
        ),
        pytest.param(
            "› go\n\n• Thinking about it (12s • esc to interrupt)", PaneState.RUNNING, id="status-title"
        ),
        pytest.param("› esc to interrupt please", PaneState.WAITING, id="words-of-the-status-line"),
    ],
)
def test_inline_screens(conversation: str, state: PaneState) -> None:
    assert codex_pane_state(_screen(conversation)) == state


@pytest.mark.parametrize(
    ("text", "state"),
    [
        pytest.param("\n" * 49, PaneState.CREATING, id="blank"),
        pytest.param("root@box:/work/repo# ", PaneState.STOPPED, id="shell-prompt"),
        pytest.param("some other program\n", PaneState.UNKNOWN, id="not-codex"),
    ],
)
def test_screens_without_codex(text: str, state: PaneState) -> None:
    assert codex_pane_state(text) == state


def test_a_message_typed_in_the_input_box_is_not_the_conversation() -> None:
    screen = HEADER + f"› fix it\n\n• Done.\n\n› {COMPLETION_MARKER}\n\n  GPT-5.5 default · /work/repo\n"
    assert codex_pane_state(screen) == PaneState.WAITING


@pytest.mark.parametrize("path", APPROVALS, ids=[path.name for path in APPROVALS])
def test_approval_dialog_reads_with_its_keys(path: Path) -> None:
    dialog = read_codex_dialog(path.read_text(encoding="utf-8"))
    assert dialog is not None
    assert dialog.kind == "permission"
    assert dialog.title.startswith("Would you like to")
    assert [option.number for option in dialog.options] == [1, 2, 3]
    assert dialog.selected == 0
    assert not any(option.label.endswith(")") for option in dialog.options)  # the key is not in the label
    assert codex_option_keys(dialog, pick(dialog, "approve")) == ["y"]
    assert codex_option_keys(dialog, pick(dialog, "deny")) == ["Escape"]
    always = dialog.options[pick(dialog, "always")]
    assert always.label.startswith("Yes, and don't ask again") and always.key in ("p", "a")
    assert option_for_answer(dialog, "3") == 2


@pytest.mark.parametrize("path", SIGN_IN, ids=[path.name for path in SIGN_IN])
def test_the_sign_in_screen_is_a_dialog_with_its_three_ways(path: Path) -> None:
    """Codex with no login asks how to sign in before anything else: a dialog the person can answer from
    anywhere (the device code works from a phone), not an approval with no question and one option."""
    dialog = read_codex_dialog(path.read_text(encoding="utf-8"))
    assert dialog is not None and dialog.kind == "dialog"
    assert dialog.title == "Choose how you want to use Codex."
    ways = ("Sign in with ChatGPT", "Sign in with Device Code", "Sign in another way")
    assert [option.number for option in dialog.options] == [1, 2, 3]
    assert all(option.label.startswith(way) for option, way in zip(dialog.options, ways, strict=True))
    assert dialog.selected == 0
    assert option_for_answer(dialog, "2") == 1 and codex_option_keys(dialog, 1) == ["2"]
    with pytest.raises(DialogError):
        pick(dialog, "approve")


def test_a_wrapped_option_is_read_whole() -> None:
    path = FIXTURES / "permission-exec-long-command-w80.txt"
    dialog = read_codex_dialog(path.read_text(encoding="utf-8"))
    assert dialog is not None
    assert dialog.options[1].label.endswith("`") and dialog.options[1].key == "p"


@pytest.mark.parametrize(
    "path", [p for p in CAPTURES if p not in DIALOGS], ids=[p.name for p in CAPTURES if p not in DIALOGS]
)
def test_no_dialog_on_other_screens(path: Path) -> None:
    assert read_codex_dialog(path.read_text(encoding="utf-8")) is None


def test_an_option_without_a_key_is_picked_by_its_digit() -> None:
    screen = _screen("  Allow it?\n\n› 1. Allow\n  2. Refuse\n\n  Press enter to confirm or esc to cancel")
    dialog = read_codex_dialog(screen.replace(FOOTER, ""))
    assert dialog is not None and dialog.kind == "dialog"
    assert codex_option_keys(dialog, 1) == ["2"]


@pytest.mark.parametrize("path", CAPTURES, ids=[path.name for path in CAPTURES])
def test_the_input_box_reads_empty_or_absent_on_every_capture(path: Path) -> None:
    """Every capture has an empty box (its placeholder) or none (a dialog in its place, the program gone)."""
    expected = None if path.name.startswith(("permission-", "stopped-")) else ""
    assert codex_input_text(path.read_text(encoding="utf-8")) == expected


def test_the_input_box_reads_what_is_typed_there_not_the_conversation() -> None:
    typed = _screen("› fix it\n\n• Done.").replace(
        "Ask Codex to do anything", "now the tests\n  and the docs"
    )
    assert codex_input_text(typed) == "now the tests"
    assert (
        codex_input_text(_screen("› fix it").replace("Ask Codex to do anything", "Ask a follow-up question"))
        == ""
    )


def test_a_message_shown_in_the_conversation_with_no_box_below_is_no_input_box() -> None:
    """Just submitted: the message is the conversation's last `›` line and the status line is under it."""
    assert codex_input_text(HEADER + "› fix it\n\n• Working (0s • esc to interrupt)\n") is None
