"""Dialogs read by their shape (a question over a ❯-marked option list), in any language and with any
number of options; screens that only look alike (a reply with a numbered list) are not dialogs."""

from __future__ import annotations

from pathlib import Path

import pytest

from worker.tmux.dialogs import Dialog, DialogError, keys_for, option_for_answer, pick, read_dialog, refusal

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
CLI = "claude-2.1.332"
BASH = (FIXTURES / "dialogs" / f"permission-bash-80.{CLI}.txt").read_text(encoding="utf-8")
IDLE = (FIXTURES / "pane-states" / "complete-cc2.1.332-bullet-w80.txt").read_text(encoding="utf-8")


def _read(name: str) -> Dialog:
    found = read_dialog((FIXTURES / "dialogs" / f"{name}.{CLI}.txt").read_text(encoding="utf-8"))
    assert found is not None
    return found


def _with_options(question: str, lines: list[str]) -> str:
    """The real Bash permission capture with its question and options replaced."""
    head = BASH[: BASH.index(" Do you want to proceed?")]
    return head + f" {question}\n" + "\n".join(lines) + "\n\n Esc to cancel · Tab to amend\n"


def _numbered(labels: list[str], default: int) -> list[str]:
    return [f" {'❯' if i == default else ' '} {i + 1}. {label}" for i, label in enumerate(labels)]


SHAPES = {
    "two": ("Weiter?", _numbered(["Ja", "Nein"], 1), ["Ja", "Nein"], 1),
    "three": ("Which one?", _numbered(["Red", "Green", "Blue"], 0), ["Red", "Green", "Blue"], 0),
    "nine": (
        "Pick a file?",
        _numbered([f"file{n}.txt" for n in range(1, 10)], 8),
        [f"file{n}.txt" for n in range(1, 10)],
        8,
    ),
    "labels-with-digits": (
        "Run the tests?",
        _numbered(["Run 2 tests in 3 files", "10. no really", "3"], 2),
        ["Run 2 tests in 3 files", "10. no really", "3"],
        2,
    ),
    "labels-with-the-marker": (
        "Which prompt sign?",
        _numbered(["Use ❯ as the prompt", "Keep > ❯ >>"], 0),
        ["Use ❯ as the prompt", "Keep > ❯ >>"],
        0,
    ),
    "unnumbered-marker-in-label": (
        "Switch?",
        ["  ❯ Yes, draw ❯ arrows", "    No"],
        ["Yes, draw ❯ arrows", "No"],
        0,
    ),
}


@pytest.mark.parametrize(("question", "lines", "labels", "default"), SHAPES.values(), ids=SHAPES.keys())
def test_a_question_over_marked_options_is_a_dialog(
    question: str, lines: list[str], labels: list[str], default: int
) -> None:
    dialog = read_dialog(_with_options(question, lines))
    assert dialog is not None
    assert (dialog.kind, dialog.title) == ("dialog", question)
    assert [o.label for o in dialog.options] == labels
    assert dialog.selected == default


def test_the_ninth_option_is_its_digit_and_digits_in_labels_do_not_confuse_the_answer() -> None:
    nine = read_dialog(_with_options("Pick a file?", _numbered([f"f{n}" for n in range(1, 10)], 0)))
    assert nine is not None
    assert keys_for(nine, option_for_answer(nine, "9")) == ["9"]
    digits = read_dialog(_with_options("Run?", _numbered(["Run 2 tests", "3", "1"], 0)))
    assert digits is not None
    assert digits.options[option_for_answer(digits, "3")].label == "1"  # by number first
    assert digits.options[option_for_answer(digits, "run 2 TESTS")].label == "Run 2 tests"


def test_an_option_the_dialog_does_not_have_lists_the_options() -> None:
    three = read_dialog(_with_options("Which one?", _numbered(["Red", "Green", "Blue"], 0)))
    assert three is not None
    with pytest.raises(DialogError) as e:
        option_for_answer(three, "7")
    assert str(e.value) == "'7' is not one of the dialog's options: 1. Red, 2. Green, 3. Blue"


TRANSLATED = {
    "german-numbered": ("dialog-translated-de-bash-80", "Möchten Sie fortfahren?", "Nein", 3, ["4"]),
    "japanese-unnumbered": (
        "dialog-translated-ja-auto-mode-approval-80",
        "続行しますか？",
        "はい",
        1,
        ["Down", "Enter"],
    ),
}


@pytest.mark.parametrize(
    ("name", "title", "label", "index", "keys"), TRANSLATED.values(), ids=TRANSLATED.keys()
)
def test_a_dialog_in_another_language_is_read_by_its_shape(
    name: str, title: str, label: str, index: int, keys: list[str]
) -> None:
    dialog = _read(name)
    assert (dialog.kind, dialog.title, dialog.selected) == ("dialog", title, 0)
    assert option_for_answer(dialog, label) == index
    assert keys_for(dialog, index) == keys
    with pytest.raises(DialogError, match=r"has no option that means approve; pick one by number: 1\. "):
        pick(dialog, "approve")  # its words are not known: a person picks by number


AUTO_MODE = {
    "approval-approve": ("permission-auto-mode-approval", "approve", "Yes", ["Down", "Enter"]),
    "approval-deny": ("permission-auto-mode-approval", "deny", "No", ["Enter"]),
    "cannot-check-stay": ("dialog-auto-mode-cannot-check", "approve", "stay in auto mode", ["Enter"]),
    "cannot-check-cancel": ("dialog-auto-mode-cannot-check", "deny", "cancel", ["Escape"]),
    "nag-keep-manual": ("dialog-auto-mode-default", "deny", "No, keep manual mode", ["Down", "Enter"]),
}


@pytest.mark.parametrize("width", [80, 100, 200])
@pytest.mark.parametrize(("name", "choice", "label", "keys"), AUTO_MODE.values(), ids=AUTO_MODE.keys())
def test_auto_modes_dialogs_are_answered(
    name: str, choice: str, label: str, keys: list[str], width: int
) -> None:
    dialog = _read(f"{name}-{width}")
    index = pick(dialog, choice)
    assert (dialog.options[index].label, keys_for(dialog, index)) == (label, keys)


def test_the_nag_is_never_approved_into_auto_mode() -> None:
    nag = _read("dialog-auto-mode-default-80")
    assert nag.title == "Make auto mode your default permission mode?"
    with pytest.raises(DialogError, match=r"pick one by number: 1\. Yes, set auto mode"):
        pick(nag, "approve")
    assert keys_for(nag, option_for_answer(nag, "1")) == ["Enter"]  # by its place: it is unnumbered


def test_the_refusal_names_a_dialog_known_by_shape_and_its_options() -> None:
    line = refusal("a1", _read("dialog-auto-mode-default-80"))
    assert line == (
        "a1 shows a dialog (Make auto mode your default permission mode?); nothing was typed. Answer it "
        "with ib answer a1 N (1. Yes, set auto mode as my default permission mode, 2. No, keep manual mode)"
    )


def _reply(*lines: str) -> str:
    """The idle capture with the agent's reply replaced."""
    return IDLE.replace("● The flag is added and documented.", "\n".join(lines))


NOT_DIALOGS = {
    "numbered-reply": _reply("● Next steps?", "  1. Add the flag", "  2. Document it", "  3. Test it"),
    "numbered-reply-with-marker": _reply("● Which?", "  1. Press ❯ to go on", "  2. Or stop", "❯ 1. x"),
    "running": (FIXTURES / "pane-states" / "running-cc2.1.332-spinner-w80.txt").read_text(encoding="utf-8"),
}


@pytest.mark.parametrize("text", NOT_DIALOGS.values(), ids=NOT_DIALOGS.keys())
def test_a_reply_with_a_numbered_list_is_not_a_dialog(text: str) -> None:
    assert read_dialog(text) is None


NON_DIALOG_CAPTURES = sorted(
    p for p in (FIXTURES / "pane-states").glob("*.txt") if not p.name.startswith("permission-")
)


@pytest.mark.parametrize("path", NON_DIALOG_CAPTURES, ids=lambda p: p.name)
def test_no_other_pane_state_is_a_dialog(path: Path) -> None:
    assert read_dialog(path.read_text(encoding="utf-8")) is None


def test_the_refusal_offers_always_only_when_the_dialog_does() -> None:
    line = refusal("a1", _read("permission-auto-mode-approval-80"))
    assert line.endswith("Answer it with ib approve a1 or ib deny a1 [REASON]")
