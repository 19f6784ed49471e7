"""The state of a Gemini CLI agent read from the text of its tmux pane, and the keys that answer its
dialogs. Reads 0.61.0's screen: the input box ("Type your message") and what it holds, the status line of
a turn at work ("⠋ Thinking... (esc to cancel, 3s)"), the boxed approval dialogs ("Allow execution of
[Shell]?", "Apply this change?") with their numbered options, the selected one marked ●, and the dialog of
a used-up quota ("Usage limit reached for gemini-2.5-flash." … 1. Keep trying / 2. Stop).
Pure: text in, GeminiScreen out; (dialog, choice) in, keys out. The hooks are the first signal
(worker/programs/gemini/signals.py); this is the fallback and the reader of a dialog's options.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from worker.tmux.dialogs import Dialog, DialogError, Option
from worker.tmux.input_box import probe

CREATING, IDLE, WORKING, DIALOG, LIMITED, EXITED, UNKNOWN = (
    "creating",
    "idle",
    "working",
    "dialog",
    "limited",
    "exited",
    "unknown",
)
STATES = (CREATING, IDLE, WORKING, DIALOG, LIMITED, EXITED, UNKNOWN)
BOTTOM_LINES = 40  # a dialog and the status line sit in the last lines of the screen

_BOX = "│╭╮╰╯─ "
_EXITED = re.compile(r"^Pane is dead\b")
_INPUT_BOX = re.compile(r"^\s*>\s")
_IDLE_HINT = "Type your message"
_PLACEHOLDER = "Type your message or @path/to/file"
_RULE = re.compile(r"^\s*─{8,}\s*$")  # the rule over the input box
_BOX_LINES = 4  # lines from that rule down to the box's `>`: the approval mode's line, a blank, hints
# the footer under the input box: " workspace (/directory)   branch   sandbox   /model"
_FOOTER = re.compile(r"^\s*workspace \(")
_FOOTER_REACH = 12  # lines from the box's `>` down to the footer: the rest of a wrapped message, a blank
# a turn at work shows its spinner and "(esc to cancel, 3s)"; "Executing Hook: …" without them is a hook's
# name left on the status line after it ran (it stays there at an idle prompt)
_AT_WORK = re.compile(r"\(esc to cancel\b")
_TITLE = re.compile(r"^(?:Allow [^?]*|Apply this change|Do you want to [^?]*)\?$")
# a used-up quota: "Usage limit reached for gemini-2.5-flash." (or "for all Pro models."), the reset when
# the API named one ("Access resets at 1:01 PM UTC."), then 1. Keep trying … 2. Stop
_LIMIT_TITLE = re.compile(r"^Usage limit reached for .+\.$")
_OPTION = re.compile(r"^(●\s*)?(\d{1,2})\.\s+(\S.*?)$")
_ERROR = re.compile(r"^✕\s+(\[API Error:.*)$")
_ESC = " (esc)"
# `--resume` hides the input box while it loads the conversation, and what is typed then is lost
_RESUMING = "Resuming session..."
SENT_PROMPT = re.compile(r"^ > \S")  # a prompt as the conversation shows it once sent
_WARNING = "⚠"
# the status row over the input box, drawn before the rest of the screen ("? for shortcuts")
_STATUS_ROW = re.compile(r"^\s*Executing Hook:|\? for shortcuts\s*$")
_ONCE, _SESSION = "Allow once", "Allow for this session"


@dataclass(frozen=True)
class GeminiScreen:
    """What the pane shows: `state`, the open `dialog` (state dialog) and the API error an idle turn
    ended with, if one is on screen below the last prompt."""

    state: str
    dialog: Dialog | None = None
    error: str = ""


def _inner(line: str) -> str:
    """A line without the box borders a dialog and its diff are drawn in."""
    return line.strip().strip("│").strip()


def read_screen(text: str) -> GeminiScreen:
    """The agent's state from the whole pane."""
    lines = [line.rstrip() for line in text.splitlines()]
    while lines and not lines[-1].strip():
        lines.pop()
    if not lines:
        return GeminiScreen(CREATING)
    if _EXITED.match(lines[-1]):
        return GeminiScreen(EXITED)
    if _starting(lines):
        return GeminiScreen(CREATING)
    return _read_bottom(lines)


def _starting(lines: list[str]) -> bool:
    """Whether the screen is one Gemini CLI draws before it takes keys as it will: its input box alone,
    over startup warnings at most (before its settings are read it draws no header nor history, and a
    session it resumes then hides the box and forgets what it holds), or the box hidden while a resumed
    conversation loads ("Resuming session...")."""
    if any(_RESUMING in line for line in lines[-BOTTOM_LINES:]):
        return True
    rules = [index for index, line in enumerate(lines) if _RULE.match(line)]
    if not rules:
        return False
    in_warning = False
    for line in lines[: rules[-1]]:
        if not line.strip():
            in_warning = False
        elif line.lstrip().startswith(_WARNING):
            in_warning = True
        elif not (in_warning and line.startswith(" ")) and not _STATUS_ROW.search(line):
            return False  # the header, the conversation, anything drawn by a program that started
    return True


def _read_bottom(lines: list[str]) -> GeminiScreen:
    """The state the bottom of a drawn screen shows: a dialog, the usage limit, a turn at work, the input
    box (with the API error the turn ended with, read from all `lines`)."""
    bottom = lines[-BOTTOM_LINES:]
    dialog = read_dialog(bottom)
    if dialog is not None:
        return GeminiScreen(DIALOG, dialog)
    if _usage_limit(bottom):
        return GeminiScreen(LIMITED)
    if any(_AT_WORK.search(line) for line in bottom):
        return GeminiScreen(WORKING)
    if any(_IDLE_HINT in line for line in bottom) or any(_INPUT_BOX.match(line) for line in bottom[-8:]):
        return GeminiScreen(IDLE, error=_last_error(lines))
    return GeminiScreen(UNKNOWN)


def read_dialog(lines: list[str]) -> Dialog | None:
    """The approval dialog at the bottom of `lines`: its question, then its numbered options."""
    inner = [_inner(line) for line in lines]
    for index in range(len(inner) - 1, -1, -1):
        if _TITLE.match(inner[index]):
            options, selected = _options(inner[index + 1 :])
            if options:
                return Dialog("permission", inner[index], options, selected)
            return None
    return None


def _usage_limit(lines: list[str]) -> bool:
    """Whether the bottom of the screen shows the usage-limit dialog: its title, then its options. No
    person's dialog (`dialog` stays None): the agent is parked on the limit, and the worker's Enter at the
    reset picks the option drawn selected, "Keep trying" (worker.service.limit_resume)."""
    inner = [_inner(line) for line in lines]
    titles = [index for index, line in enumerate(inner) if _LIMIT_TITLE.match(line)]
    return bool(titles) and bool(_options(inner[titles[-1] + 1 :])[0])


def _options(lines: list[str]) -> tuple[tuple[Option, ...], int]:
    options: list[Option] = []
    selected = 0
    for line in lines:
        found = _OPTION.match(line)
        if found is None:
            if options and not line:
                break  # the blank line under the list closes it
            continue  # the hint under the title ("Redirection detected…")
        if found.group(1):
            selected = len(options)
        label = found.group(3)
        key = "Escape" if label.endswith(_ESC) else ""
        options.append(Option(label.removesuffix(_ESC), int(found.group(2)), key))
    return tuple(options), selected


def _last_error(lines: list[str]) -> str:
    """The API error drawn after the last prompt the person sent, if any, with its wrapped lines."""
    for index in range(len(lines) - 1, -1, -1):
        stripped = lines[index].strip()
        if stripped.startswith("> ") and _IDLE_HINT not in stripped:
            return ""
        if found := _ERROR.match(stripped):
            wrapped = [found.group(1)]
            for line in lines[index + 1 :]:
                if not line.startswith("  ") or not line.strip():
                    break
                wrapped.append(line.strip())
            return " ".join(wrapped)
    return ""


def input_text(text: str) -> str | None:
    """What the input box holds: the first line after its `>` ("" while it shows its placeholder), read
    under the last rule, where it follows the approval mode's line ("Shift+Tab to accept edits") and a
    blank; None when the screen shows no input box (a dialog, the start-up)."""
    lines = [line.rstrip() for line in text.splitlines()]
    rules = [index for index, line in enumerate(lines) if _RULE.match(line)]
    if not rules:
        return None
    for line in lines[rules[-1] + 1 : rules[-1] + 1 + _BOX_LINES]:
        if _INPUT_BOX.match(line) or line.strip() == ">":
            held = line.strip()[1:].strip()
            return "" if held.startswith(_PLACEHOLDER) else held
    return None


def sent_count(text: str, message: str) -> int:
    """How many of the prompts the screen shows sent (` > text` in the conversation, not an input box's
    line under a rule: the scrollback may hold earlier frames' boxes) start as `message` does (its first
    line, as far as the box would show it)."""
    lines = [line.rstrip() for line in text.splitlines()]
    boxes = {
        row
        for index, line in enumerate(lines)
        if _RULE.match(line)
        for row in range(index, index + 1 + _BOX_LINES)
    }
    start = probe(message)
    sent = [
        line[3:]
        for row, line in enumerate(lines)
        if row not in boxes
        and SENT_PROMPT.match(line)
        and not _over_footer(lines[row + 1 : row + 1 + _FOOTER_REACH])
    ]
    return sum(1 for prompt in sent if prompt.startswith(start) and _IDLE_HINT not in prompt)


def _over_footer(below: list[str]) -> bool:
    """Whether the lines under a ` > text` line (_FOOTER_REACH of them) show it is an input box's: the
    footer follows it, past the rest of its text and blanks only. A box is told so by what follows it, since
    a capture of the scrollback may begin below an earlier frame's rule; a sent prompt is followed by the
    reply, a tool or the status row, and another box's rule comes before any footer."""
    for line in below:
        if _FOOTER.match(line):
            return True
        if line and not line.startswith("  "):
            return False
    return False


def pick(dialog: Dialog, choice: str) -> int:
    """The option `choice` means: `approve` (allow once), `always` (allow for this session), `deny` (the
    "No, suggest changes" option), a number as drawn, or a label in any case."""
    labels = [option.label for option in dialog.options]
    wanted = choice.strip()
    meaning = {"approve": _ONCE, "always": _SESSION}.get(wanted.casefold())
    for index, option in enumerate(dialog.options):
        if wanted == str(option.number) or wanted.casefold() == option.label.casefold():
            return index
        if meaning and option.label == meaning:
            return index
        if wanted.casefold() == "deny" and option.label.startswith("No"):
            return index
    raise DialogError(
        f"{dialog.title} has no option for {choice!r}; answer with one of: "
        + ", ".join(f"{o.number}. {label}" for o, label in zip(dialog.options, labels, strict=True))
    )
