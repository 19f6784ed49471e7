"""Dialogs read from real Claude Code captures (tests/fixtures/dialogs, named
kind-what-width.claude-VERSION) and the keys that answer them."""

from __future__ import annotations

import unicodedata
from pathlib import Path

import pytest

from worker.tmux.dialogs import DialogError, keys_for, option_for_answer, pick, read_dialog, refusal

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "dialogs"


def _dialog(name: str):  # type: ignore[no-untyped-def]
    found = read_dialog((FIXTURES / name).read_text(encoding="utf-8"))
    assert found is not None
    return found


@pytest.mark.parametrize("path", sorted(FIXTURES.glob("*.txt")), ids=lambda p: p.name)
def test_every_capture_reads_as_its_kind(path: Path) -> None:
    dialog = read_dialog(path.read_text(encoding="utf-8"))
    assert dialog is not None
    assert dialog.kind == path.name.split("-")[0]


ANSWERS = {
    "bash-approve": ("permission-bash-200", "approve", "Yes", ["1"]),
    "bash-always": ("permission-bash-80", "always", "Yes, and always allow access", ["2"]),
    "bash-deny": ("permission-bash-200", "deny", "No", ["4"]),
    "write-always-is-accept-edits": (
        "permission-write-100",
        "always",
        "Yes, and switch to accept edits",
        ["2"],
    ),
    "write-deny": ("permission-write-100", "deny", "No", ["3"]),
    "plan-approve": ("plan-200", "approve", "Yes, and switch to default", ["1"]),
    "plan-keep-planning": ("plan-200", "deny", "No", ["2"]),
    "trust": ("trust-80", "approve", "Yes, I trust this folder", ["Down", "Enter"]),
    "refuse-trust": ("trust-200", "deny", "No, exit", ["Enter"]),
    "beside-diff-panel-approve": ("permission-beside-diff-panel-200", "approve", "Yes", ["1"]),
    "beside-diff-panel-always": ("permission-beside-diff-panel-200", "always", "Yes, and don’t ask", ["2"]),
    "beside-diff-panel-deny": ("permission-beside-diff-panel-200", "deny", "No", ["4"]),
    **{
        f"env-prefixed-{width}-{choice}": (f"permission-env-prefixed-command-{width}", choice, label, keys)
        for width in (80, 100, 200)
        for choice, label, keys in (("approve", "Yes", ["1"]), ("deny", "No", ["4"]))
    },
}


@pytest.mark.parametrize(("fixture", "choice", "label", "keys"), ANSWERS.values(), ids=ANSWERS.keys())
def test_answer_keys(fixture: str, choice: str, label: str, keys: list[str]) -> None:
    dialog = _dialog(f"{fixture}.claude-2.1.332.txt")
    index = pick(dialog, choice)
    assert dialog.options[index].label.startswith(label)
    assert keys_for(dialog, index) == keys


def _beside_a_panel(text: str, column: int) -> str:
    """The screen with a panel drawn right of `column`: a "│" there on every line, text after it that
    reads like a question and like options. Beside the real diff panel it is a rule inside that panel
    (a side-by-side diff)."""
    panel = ["+ Which colour?", "❯ 1. red", "  2. blue", ""]
    lines = []
    for index, line in enumerate(text.splitlines()):
        width = sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in line)
        lines.append(line + " " * (column - width) + "│" + panel[index % len(panel)])
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("path", sorted(FIXTURES.glob("*.txt")), ids=lambda p: p.name)
def test_a_panel_on_the_right_is_cut_away_before_the_dialog_is_read(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert read_dialog(_beside_a_panel(text, 210)) == read_dialog(text)


def test_the_real_diff_panel_is_cut_away() -> None:
    dialog = _dialog("permission-beside-diff-panel-200.claude-2.1.332.txt")
    assert (dialog.kind, dialog.title, dialog.selected) == ("permission", "Do you want to proceed?", 0)
    assert [o.label for o in dialog.options][::3] == ["Yes", "No"]
    assert refusal("a1", dialog).endswith("Answer it with ib approve a1 [--always] or ib deny a1 [REASON]")


@pytest.mark.parametrize("width", [80, 100, 200])
def test_an_env_prefixed_command_is_read_under_its_command_box(width: int) -> None:
    """`FOO=1 ib notify hi` (not the sandbox's excluded `ib`): the command between two dashed rules, a
    reason and a tip above the question; at 200 columns the whole dialog is beside the diff panel."""
    dialog = _dialog(f"permission-env-prefixed-command-{width}.claude-2.1.332.txt")
    assert (dialog.kind, dialog.title, dialog.selected) == ("permission", "Do you want to proceed?", 0)
    assert [o.number for o in dialog.options] == [1, 2, 3, 4]
    assert dialog.options[1].label.startswith("Yes, and don’t ask again for: FOO=1 ib notify ")
    assert refusal("a1", dialog).endswith("Answer it with ib approve a1 [--always] or ib deny a1 [REASON]")


def test_auto_mode_is_never_picked() -> None:
    dialog = _dialog("permission-bash-200.claude-2.1.332.txt")
    assert all("auto mode" not in dialog.options[pick(dialog, c)].label for c in ("approve", "always"))


def test_plan_has_no_always() -> None:
    with pytest.raises(DialogError, match="no 'always' option"):
        pick(_dialog("plan-200.claude-2.1.332.txt"), "always")


def test_question_options_by_number_or_label() -> None:
    dialog = _dialog("ask-200.claude-2.1.332.txt")
    assert dialog.title == "Which database should I use?"
    assert keys_for(dialog, option_for_answer(dialog, "sqlite")) == ["2"]
    assert keys_for(dialog, option_for_answer(dialog, "1")) == ["1"]
    with pytest.raises(DialogError, match=r"not one of the dialog's options: 1\. Postgres, 2\. SQLite"):
        option_for_answer(dialog, "MySQL")


def test_trust_dialog_names_the_folder() -> None:
    assert _dialog("trust-200.claude-2.1.332.txt").folder == "/tmp/cc-hooks-probe/repo"


@pytest.mark.parametrize(
    "text",
    [
        "",
        "● Done.\n  I HAVE COMPLETED THE GOAL\n" + "─" * 40 + "\n❯ \n" + "─" * 40 + "\n",
        "● I asked: Do you want to proceed?\n" + "─" * 40 + "\n❯ \n",  # the words, but no options
    ],
    ids=["empty", "idle", "question-words-only"],
)
def test_no_dialog(text: str) -> None:
    assert read_dialog(text) is None


@pytest.mark.parametrize("path", sorted((FIXTURES / "closed").glob("*.txt")), ids=lambda p: p.name)
def test_a_dialog_the_program_wrote_under_is_closed(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert read_dialog(text) is None
    drawn = text.split("Claude Code didn't start")[0]  # the same screen before the program wrote under it
    assert read_dialog(drawn) is not None


def test_refusal_names_the_dialog_and_the_command() -> None:
    line = refusal("a1", _dialog("permission-bash-80.claude-2.1.332.txt"))
    assert line == (
        "a1 shows a permission dialog (Do you want to proceed?); nothing was typed. "
        "Answer it with ib approve a1 [--always] or ib deny a1 [REASON]"
    )
    assert "ib answer a1 OPTION" in refusal("a1", _dialog("ask-200.claude-2.1.332.txt"))


HOOK_WORDS = {
    "approve": ("permission-bash-80", "approve", "Yes"),
    "approve-always": ("permission-bash-80", "approve always", "Yes, and always allow access"),
    "deny": ("permission-bash-200", "deny", "No"),
    "keep-planning": ("plan-200", "keep planning", "No"),
    "trust": ("trust-80", "trust", "Yes, I trust this folder"),
    "refuse": ("trust-80", "refuse", "No, exit"),
}


@pytest.mark.parametrize(("fixture", "word", "label"), HOOK_WORDS.values(), ids=HOOK_WORDS.keys())
def test_the_options_a_hooks_event_offers_pick_their_option(fixture: str, word: str, label: str) -> None:
    dialog = _dialog(f"{fixture}.claude-2.1.332.txt")
    assert dialog.options[option_for_answer(dialog, word)].label.startswith(label)


def test_a_dialog_known_only_by_shape_takes_no_hook_words() -> None:
    dialog = _dialog("dialog-translated-de-bash-80.claude-2.1.332.txt")
    with pytest.raises(DialogError, match=r"'approve' is not one of the dialog's options: 1\. Ja, 2\. "):
        option_for_answer(dialog, "approve")
