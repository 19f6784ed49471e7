"""The state of a Codex CLI agent read from its tmux pane, and the approval dialog it shows. Pure: pane
text in, PaneState / Dialog out.

Codex 0.169.0 draws a header (`>_ OpenAI Codex (v…)` over `loading`, then the working folder), the
conversation (`› ` before what the person typed, `• ` before the agent's messages and tool calls, `■ `
before an error, `Worked for 9s • 01:42` at a turn's end), the status line of a running turn
(`• Working (3s • esc to interrupt)`), and at the bottom the input box (`› Ask Codex to do anything`) with
its footer. An approval dialog takes the input box's place: a question, the command or files, numbered
options each with its own key (`› 1. Yes, proceed (y)`) and `Press enter to confirm or esc to cancel`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from worker.markers import COMPLETION_MARKER, WAITING_MARKER
from worker.tmux.dialogs import Dialog, Option
from worker.tmux.pane_state import PaneState

PROMPT = "›"  # before the person's messages, the input box and the selected option of a dialog
COMMAND = "$ "  # before the command an approval dialog asks to run
HEADER_LINES = 4  # the header's box: the version line, then `loading` or the working folder
DIALOG_TAIL = 8  # lines after a dialog's footer at most (blank rows of the pane)
TITLE_ABOVE = 12  # lines between a dialog's question and its first option at most (command, reason)

_EXITED = re.compile(r"^Pane is dead\b")
_SHELL_PROMPT = re.compile(r"^(?:[\w.-]+@[\w.-]+:\S*\s?|[\w.-]+)?[$#%]$")
_LOADING = re.compile(r"^\s*│?\s*loading\s*│?$")
_HEADER = re.compile(r">_ OpenAI Codex \(v")
_WORKING = re.compile(r"^[•◦·]?\s*\S.*\(\s*(?:\d+[hms]\s*)+•\s*esc to interrupt\)")
_DIALOG_FOOTER = re.compile(r"^\s*Press enter to (?:confirm|continue)\b")
_OPTION = re.compile(r"^([›>])?\s*(\d{1,2})\.\s+(\S.*?)\s*$")  # `>` marks the sign-in screen's choice
_OPTION_KEY = re.compile(r"^(.*?)\s+\((esc|enter|[a-z0-9])\)$")
_INTERRUPTED = re.compile(r"^■\s+Conversation interrupted\b")
_ERROR = re.compile(r"^■\s+\S")
_RATE_LIMIT = re.compile(r"(?i)\b429\b|rate limit|usage limit|too many requests")
_KEY_NAMES = {"esc": "Escape", "enter": "Enter"}
# what the empty input box shows: before the first message, and after it
_PLACEHOLDERS = ("Ask Codex to do anything", "Ask a follow-up question")


def codex_pane_state(text: str) -> PaneState:
    """The agent's state from its pane text."""
    lines = _trimmed(text)
    if not lines:
        return PaneState.CREATING
    if _EXITED.match(lines[-1]) or (_input_box(lines) is None and _SHELL_PROMPT.match(lines[-1])):
        return PaneState.STOPPED
    if read_codex_dialog(text) is not None:
        return PaneState.PERMISSION
    box = _input_box(lines)
    if box is None or any(_LOADING.match(line) for line in lines[:HEADER_LINES]):
        return PaneState.CREATING if any(_HEADER.search(line) for line in lines) else PaneState.UNKNOWN
    conversation = lines[:box]
    if any(_WORKING.match(line) for line in conversation[-6:]):
        return PaneState.RUNNING
    return _turn_state(_last_turn(conversation))


def codex_input_text(text: str) -> str | None:
    """What the input box holds: the first line after its `›` ("" while it shows a placeholder); None
    when the screen shows no input box (a dialog takes its place, the start-up, the program exited)."""
    lines = _trimmed(text)
    box = _input_box(lines)
    if box is None or read_codex_dialog(text) is not None:
        return None
    held = lines[box].removeprefix(PROMPT).strip()
    return "" if held in _PLACEHOLDERS else held


def _trimmed(text: str) -> list[str]:
    lines = [line.rstrip() for line in text.splitlines()]
    while lines and not lines[-1]:
        lines.pop()
    return lines if any(lines) else []


def _input_box(lines: Sequence[str]) -> int | None:
    """The index of the input box: the last `›` line, with only its footer (indented lines) below it."""
    for index in range(len(lines) - 1, -1, -1):
        if lines[index].startswith(PROMPT):
            below = lines[index + 1 :]
            return index if all(not line or line.startswith(" ") for line in below) else None
    return None


def _last_turn(conversation: Sequence[str]) -> list[str]:
    """What came after the last message the person sent (the whole conversation when none was sent)."""
    sent = [i for i, line in enumerate(conversation) if line.startswith(PROMPT)]
    return list(conversation[sent[-1] + 1 :]) if sent else list(conversation)


def _turn_state(turn: Sequence[str]) -> PaneState:
    """An idle screen: the last turn's error, else its last marker, else waiting for the person."""
    errors = [line for line in turn if _ERROR.match(line) and not _INTERRUPTED.match(line)]
    if errors:
        return PaneState.RATE_LIMITED if _RATE_LIMIT.search(errors[-1]) else PaneState.ERROR
    state = PaneState.WAITING
    for line in turn:
        said = line.removeprefix("•").strip()
        if said == COMPLETION_MARKER:
            state = PaneState.COMPLETE
        elif said == WAITING_MARKER:
            state = PaneState.WAITING
    return state


# --- the approval dialog ----------------------------------------------------------------------------


def read_codex_dialog(text: str) -> Dialog | None:
    """The dialog at the bottom of the pane, waiting for a person, or None when there is none."""
    lines = _trimmed(text)
    footer = next(
        (
            i
            for i in range(len(lines) - 1, max(-1, len(lines) - 1 - DIALOG_TAIL), -1)
            if _DIALOG_FOOTER.match(lines[i])
        ),
        None,
    )
    if footer is None:
        return None
    first, options, selected = _options(lines[:footer])
    if not options:
        return None
    title = _title(lines[max(0, first - TITLE_ABOVE) : first])
    kind = (
        "trust"
        if "trust" in title.casefold()
        else "permission"
        if title.startswith("Would you like")
        else "dialog"
    )
    return Dialog(kind, title, tuple(options), selected)


def _options(lines: Sequence[str]) -> tuple[int, list[Option], int]:
    """The numbered options just above the footer (a label wrapped onto the next lines is joined): the
    index of the first option's line, the options, and which one the `›` points at."""
    labels: list[tuple[int, str]] = []
    selected = 0
    first = len(lines)
    pending: list[str] = []
    for index in range(len(lines) - 1, -1, -1):
        line = lines[index]
        found = _OPTION.match(line)
        if found:
            labels.insert(0, (int(found.group(2)), " ".join([found.group(3), *pending])))
            pending = []
            first = index
            if found.group(1):
                selected = -len(labels)  # counted from the end until every option is known
        elif line.startswith("   ") and line.strip():
            pending.insert(0, line.strip())  # a wrapped label, or the line that explains the option
        elif line.strip():
            break  # blank lines part the sign-in screen's options; any other line ends the list
    options = [_option(number, label) for number, label in labels]
    return first, options, (len(options) + selected) % len(options) if options else 0


def _option(number: int, label: str) -> Option:
    keyed = _OPTION_KEY.match(label)
    if keyed is None:
        return Option(label, number)
    key = keyed.group(2)
    return Option(keyed.group(1), number, _KEY_NAMES.get(key, key))


def _title(above: Sequence[str]) -> str:
    """The dialog's question: the last line above its options that ends with a question mark, but for
    the command the dialog shows (`$ …` and the lines it wraps onto), which may end in one (`echo $?`).
    A screen that asks no question (the sign-in screen: "Choose how you want to use Codex.") is titled by
    its last line above the options, the command never."""
    lines = [line.strip() for line in above]
    command = max((i for i, line in enumerate(lines) if line.startswith(COMMAND)), default=len(lines))
    questions = [line for line in lines[:command] if line.endswith("?")]
    if questions:
        return questions[-1]
    said = [line for line in lines[:command] if line]
    return said[-1] if said else ""


def codex_option_keys(dialog: Dialog, index: int) -> list[str]:
    """The keys that pick option `index`: the key drawn beside it, else its digit and Enter."""
    option = dialog.options[index]
    if option.key:
        return [option.key]
    return [str(option.number if option.number is not None else index + 1)]
