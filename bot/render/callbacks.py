"""Callback data of the bot's inline buttons: building it and checking what comes back.

Pure. The format is short and strict so it always fits Telegram's 64 bytes and anything forged or
garbled parses to None: `<action>:<agent id>` for d (diff), m (merge), k (kill), l (look), s (screenshot),
v (approve a reviewed change), r (request changes), b (raise the budget that paused it), c (continue after
the watchdog),
`<action>:<plan id>` for p (approve), e (edit), x (discard) of a plan,
`a:<question id>:<option index>` for the answer buttons of a question, `o:<question id>:<number>` for
an option of a dialog (the number a person would type), and `<y|w|n>:<agent id>:<dialog>` (allow,
always allow, deny; the dialog is the 8 hex digits of its prompt id `p-…`) for an agent's dialog.
`pattern` is the whole data of one kind of button, for the handler that takes its taps.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

CALLBACK_MAX_BYTES = 64
MAX_OPTION_INDEX = 99

_ID = r"[A-Za-z0-9][A-Za-z0-9._-]{0,55}"  # at most 56 characters: "a:<id>:99" stays within 64 bytes
_SHAPES = {  # what follows `<action>:`, by action
    **dict.fromkeys("dmkflsvrbcpex", rf"({_ID})"),
    **dict.fromkeys("ao", rf"({_ID}):(0|[1-9][0-9]?)"),
    **dict.fromkeys("ywn", rf"({_ID}):([0-9a-f]{{8}})"),
}


class Action(StrEnum):
    """What a button asks for; the value is the prefix in the callback data."""

    DIFF = "d"
    MERGE = "m"
    KILL = "k"
    KILL_ANYWAY = "f"  # an agent with work nobody merged, once the person confirms: its work is thrown away
    LOOK = "l"
    SHOT = "s"
    APPROVE = "v"  # a reviewed change: into the merge queue
    REQUEST_CHANGES = "r"  # a reviewed change: the comments waiting for it, to the agent as one prompt
    RAISE = "b"  # the budget that paused an agent, by its step; the agent goes on
    CONTINUE = "c"  # an agent the runaway watchdog paused goes on
    PLAN_APPROVE = "p"
    PLAN_EDIT = "e"
    PLAN_DISCARD = "x"
    ANSWER = "a"
    OPTION = "o"
    ALLOW = "y"
    ALWAYS = "w"
    DENY = "n"


DIALOG_ACTIONS = frozenset({Action.ALLOW, Action.ALWAYS, Action.DENY})
NUMBERED = frozenset({Action.ANSWER, Action.OPTION})  # their target is a question, with a number


@dataclass(frozen=True)
class Callback:
    """A button press: an action on an agent, or option `option` of question `target` (its index for
    ANSWER, the number drawn beside it for OPTION)."""

    action: Action
    target: str
    option: int | None = None
    prompt: str | None = None  # the dialog's prompt id (`p-` and 8 hex digits), for dialog actions

    def encode(self) -> str | None:
        """The callback data, or None when the ids cannot be carried (odd characters, too long)."""
        if self.action in NUMBERED:
            data = f"{self.action.value}:{self.target}:{self.option}"
        elif self.action in DIALOG_ACTIONS and self.prompt and self.prompt.startswith("p-"):
            data = f"{self.action.value}:{self.target}:{self.prompt[2:]}"
        elif self.option is None:
            data = f"{self.action.value}:{self.target}"
        else:
            return None
        return data if parse_callback(data) == self else None


def pattern(*actions: Action) -> re.Pattern[str]:
    """The whole callback data of these actions' buttons (all of one shape), at most 64 bytes: what a
    CallbackQueryHandler for them matches. Anything forged or garbled matches no action's pattern."""
    return re.compile(rf"(?=.{{1,{CALLBACK_MAX_BYTES}}}\Z)([{''.join(actions)}]):{_SHAPES[actions[0]]}\Z")


def parse_callback(data: str) -> Callback | None:
    """The button a callback came from, or None for anything malformed, forged or over 64 bytes.

    Only the shape is checked here: whether the agent or question exists, whether the option index is
    within the question's options, and whether the user may press it, is for the caller to check.
    """
    m = pattern(Action(data[0])).match(data) if data[:1] in _SHAPES else None
    if m is None:
        return None
    action, target = Action(m.group(1)), m.group(2)
    if action in NUMBERED:
        return Callback(action, target, int(m.group(3)))
    if action in DIALOG_ACTIONS:
        return Callback(action, target, prompt=f"p-{m.group(3)}")
    return Callback(action, target)
