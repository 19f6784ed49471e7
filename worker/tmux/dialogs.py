"""The dialogs Claude Code shows a person, read from pane text, and the keys that answer them.

Pure: text in, `Dialog` out; (dialog, choice) in, keys out. Kinds: `permission` (a tool call: "Do you
want to proceed?", "Do you want to create x?"), `plan` (ExitPlanMode: "Exit plan mode?"), `ask`
(AskUserQuestion: "Enter to select · ↑/↓ to navigate") and `trust` (the folder-trust dialog, before
any hook runs); any other screen shaped like a dialog (a question with a ❯-marked option list under it,
in any language) is a `dialog` (worker/tmux/dialog_shape.py). Numbered options are answered with their
digit, as the dialog expects; unnumbered ones with arrows from the selected option and Enter. A diff
panel open on the right (wide panes, after file edits) is cut away first: the dialog is drawn beside it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from worker.markers import FROM_PANE
from worker.tmux.dialog_shape import Shape, read_key_hints, read_shape
from worker.tmux.pane_screen import conversation_column

if TYPE_CHECKING:
    from bus.inbox.prompts import Prompt

BOTTOM_LINES = 40  # a dialog sits at the bottom of the screen, below the conversation
STILL_CLOSING = 3.0  # seconds an answered dialog may stay drawn before the agent redraws its screen
DRAW_WAIT = 10.0  # seconds from a hook's record within which a dialog not on the pane yet is still coming

_OPTION = re.compile(r"^\s*(❯\s*)?(?:(\d{1,2})\.\s+)?(\S.*?)\s*$")
_NUMBERED = re.compile(r"^\s*(?:❯\s*)?\d{1,2}\.\s+\S")
_PERMISSION_TITLE = re.compile(
    r"^\s*Do you want to (?:proceed|make this edit|create|allow|run|fetch|use)\b.*\?\s*$"
)
_PLAN_TITLE = re.compile(r"^\s*(?:Exit plan mode\?|Would you like to proceed\?)\s*$")
_ASK_FOOTER = re.compile(r"Enter to select · ↑/↓ to navigate")
_TRUST = re.compile(r"Yes, I trust this folder|Do you trust the files in this folder")
_FOOTER = re.compile(r"^\s*(?:Esc to cancel|Enter to confirm|Enter to select)")
_ALWAYS = ("always", "don't ask", "accept edits")
_RISKY = ("auto mode",)  # never picked for a person: it hands later decisions to a classifier


class DialogError(ValueError):
    """The answer does not fit the dialog on screen (no such option)."""


@dataclass(frozen=True)
class Option:
    label: str
    number: int | None  # the digit that picks it, None in unnumbered lists
    key: str = ""  # the one key that picks it, in a notice that offers keys (Enter, Escape, BTab)


@dataclass(frozen=True)
class Dialog:
    kind: str  # permission | plan | ask | trust | dialog (known only by its shape)
    title: str
    options: tuple[Option, ...]
    selected: int  # index of the option the ❯ points at
    folder: str = ""  # the trust dialog's folder

    def describe(self) -> str:
        names = {"permission": "a permission dialog", "plan": "the plan-approval dialog"}
        names |= {"ask": "a question dialog", "trust": "the folder-trust dialog"}
        return names.get(self.kind, "a dialog") + (f" ({self.title})" if self.title else "")


def read_dialog(text: str) -> Dialog | None:
    """The dialog at the bottom of the pane, or None when there is none."""
    lines = conversation_column([line.rstrip() for line in text.splitlines()])
    while lines and not lines[-1].strip():
        lines.pop()
    bottom = lines[-BOTTOM_LINES:]
    joined = "\n".join(bottom)
    if _TRUST.search(joined):
        return None if _printed_under(bottom) else _trust(bottom)
    if _ASK_FOOTER.search(joined):
        return _numbered("ask", bottom, _title_before_options(bottom))
    for index, line in enumerate(bottom):
        if _PLAN_TITLE.match(line):
            return _numbered("plan", bottom[index + 1 :], line.strip())
    for index in range(len(bottom) - 1, -1, -1):
        if _PERMISSION_TITLE.match(bottom[index]):
            return _numbered("permission", bottom[index + 1 :], bottom[index].strip())
    shape = read_shape(bottom) or read_key_hints(bottom)
    return _from_shape("dialog", shape, shape.title) if shape is not None else None


def _from_shape(kind: str, shape: Shape, title: str) -> Dialog:
    keys = shape.keys or ("",) * len(shape.options)
    drawn = zip(shape.options, keys, strict=True)
    options = tuple(Option(label, number, key) for (number, label), key in drawn)
    return Dialog(kind, title, options, shape.selected)


def _title_before_options(lines: list[str]) -> str:
    """The question of an AskUserQuestion dialog: the last line before its first numbered option."""
    for index, line in enumerate(lines):
        if _NUMBERED.match(line):
            before = [x.strip() for x in lines[:index] if x.strip()]
            return before[-1] if before else ""
    return ""


def _numbered(kind: str, lines: list[str], title: str) -> Dialog | None:
    options: list[Option] = []
    selected = 0
    started = False
    for line in lines:
        if _FOOTER.match(line):
            break
        if not _NUMBERED.match(line):
            continue  # descriptions, wrapped labels, rules
        found = _OPTION.match(line)
        assert found is not None
        started = True
        if found.group(1):
            selected = len(options)
        options.append(Option(found.group(3), int(found.group(2))))
    if not started:  # unnumbered (auto mode's "❯ No / Yes"): read the list by its shape
        shape = read_shape([title, *lines])
        return _from_shape(kind, shape, title) if shape is not None else None
    return Dialog(kind, title, tuple(options), selected)


def _printed_under(lines: list[str]) -> bool:
    """Whether the program wrote under the dialog's footer: it left the dialog on the screen and went on
    (Claude Code refused a folder prints why it did not start there, and takes seconds to exit)."""
    footers = [index for index, line in enumerate(lines) if _FOOTER.match(line)]
    return bool(footers) and any(line.strip() for line in lines[footers[-1] + 1 :])


def _trust(lines: list[str]) -> Dialog:
    folder = ""
    options: list[Option] = []
    selected = 0
    for index, line in enumerate(lines):
        stripped = line.strip()
        if stripped.startswith("Accessing workspace:"):
            folder = next((x.strip() for x in lines[index + 1 :] if x.strip()), "")
        if stripped.lstrip("❯ ").startswith(("Yes", "No")) or _NUMBERED.match(line):
            found = _OPTION.match(line)
            assert found is not None
            if found.group(1):
                selected = len(options)
            number = int(found.group(2)) if found.group(2) else None
            options.append(Option(found.group(3), number))
    return Dialog("trust", "Do you trust this folder?", tuple(options), selected, folder)


def refusal(agent_id: str, dialog: Dialog) -> str:
    """The one line `ib send` answers with when a dialog is open: what it is and what answers it."""
    if dialog.kind == "ask":
        how = f"ib answer {agent_id} OPTION (one of: {', '.join(o.label for o in dialog.options)})"
    elif dialog.kind == "trust":
        how = f"ib approve {agent_id} (trust the folder) or ib deny {agent_id}"
    elif dialog.kind == "plan":
        how = f"ib approve {agent_id} (go ahead) or ib deny {agent_id} (keep planning)"
    elif dialog.kind == "dialog":
        how = f"ib answer {agent_id} N ({option_list(dialog)})"
    else:
        always = " [--always]" if any(_has(o.label, _ALWAYS) for o in dialog.options) else ""
        how = f"ib approve {agent_id}{always} or ib deny {agent_id} [REASON]"
    return f"{agent_id} shows {dialog.describe()}; nothing was typed. Answer it with {how}"


# --- answering ------------------------------------------------------------------------------------


def pick(dialog: Dialog, choice: str) -> int:
    """The index of the option `choice` means: approve, always, deny (permission, plan, trust)."""
    labels = [option.label for option in dialog.options]
    keyed = {option.key: i for i, option in enumerate(dialog.options) if option.key}
    yes = [i for i, label in enumerate(labels) if label.startswith("Yes") and not _has(label, _RISKY)]
    yes += [keyed["Enter"]] if "Enter" in keyed else []  # a notice: go on as it proposes
    no = [i for i, label in enumerate(labels) if label.startswith("No")]
    no += [keyed["Escape"]] if "Escape" in keyed else []
    if choice == "always":
        found = [i for i in yes if _has(labels[i], _ALWAYS)]
        if not found:
            raise DialogError(f"{dialog.describe()} offers no 'always' option; approve it once instead")
        return found[0]
    candidates = no if choice == "deny" else [i for i in yes if not _has(labels[i], _ALWAYS)] or yes
    if not candidates:
        raise DialogError(
            f"{dialog.describe()} has no option that means {choice}; "
            f"pick one by number: {option_list(dialog)}"
        )
    return candidates[0]


MEANINGS = {"approve": "approve", "trust": "approve", "approve always": "always", "always": "always"}
MEANINGS |= {"deny": "deny", "refuse": "deny", "keep planning": "deny"}
"""The answers a hook's event offers (worker.programs.hook_outcome: PERMISSION_OPTIONS...), as choices."""


def option_for_answer(dialog: Dialog, answer: str) -> int:
    """The option a person's answer names: its number (its place in an unnumbered list), its label (any
    case), or for a permission, plan or trust dialog what it means (approve, always, deny)."""
    wanted = answer.strip()
    for index, option in enumerate(dialog.options):
        if wanted == str(option.number if option.number is not None else index + 1):
            return index
    for index, option in enumerate(dialog.options):
        if wanted.casefold() == option.label.casefold():
            return index
    meaning = MEANINGS.get(wanted.casefold())
    if meaning and dialog.kind in ("permission", "plan", "trust"):
        return pick(dialog, meaning)
    raise DialogError(f"{wanted!r} is not one of the dialog's options: {option_list(dialog)}")


def option_list(dialog: Dialog) -> str:
    """The options as a person picks them: `1. Yes, 2. No`."""
    return ", ".join(f"{o.number or i + 1}. {o.label}" for i, o in enumerate(dialog.options))


def keys_for(dialog: Dialog, index: int) -> list[str]:
    """The keys that choose option `index`: its digit, or arrows from the selection and Enter."""
    option = dialog.options[index]
    if option.key:
        return [option.key]
    if option.number is not None and option.number < 10:
        return [str(option.number)]
    step = "Down" if index > dialog.selected else "Up"
    return [step] * abs(index - dialog.selected) + ["Enter"]


def _has(label: str, words: tuple[str, ...]) -> bool:
    lowered = label.casefold().replace("’", "'")  # "don’t ask" and "don't ask" are both drawn
    return any(word in lowered for word in words)


def recorded_as(prompt: Prompt, dialog: Dialog) -> bool:
    """Whether the recorded prompt is the dialog on screen: a hook's of the same kind (a hook knows the
    tool, not the screen), or one recorded from the pane with the same question and options."""
    if prompt.tool != FROM_PANE:
        return prompt.kind == dialog.kind
    return (prompt.kind, prompt.question, prompt.options) == (
        dialog.kind,
        dialog.title,
        option_labels(dialog),
    )


def option_labels(dialog: Dialog) -> tuple[str, ...]:
    """The dialog's option labels, in order: what a prompt recorded from the pane keeps."""
    return tuple(option.label for option in dialog.options)
