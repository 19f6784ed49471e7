"""Callback data of the bot's inline buttons: building it and checking what comes back.

Pure. The format is short and strict so it always fits Telegram's 64 bytes and anything forged or
garbled parses to None: `<action>:<agent id>` for d (diff), m (merge), k (kill), l (look), s (screenshot),
v (approve a reviewed change), r (request changes), b (raise the budget that paused it), c (continue after
the watchdog),
`<action>:<plan id>` for p (approve), e (edit), x (discard) of a plan,
`a:<question id>:<option index>` for the answer buttons of a question, `o:<question id>:<number>` for
an option of a dialog (the number a person would type), and `<y|w|n>:<agent id>:<dialog>` (allow,
always allow, deny; the dialog is the 8 hex digits of its prompt id `p-…`) for an agent's dialog.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

CALLBACK_MAX_BYTES = 64
MAX_OPTION_INDEX = 99

_ID = r"[A-Za-z0-9][A-Za-z0-9._-]{0,55}"  # at most 56 characters: "a:<id>:99" stays within 64 bytes
_AGENT_DATA = re.compile(rf"([dmkflsvrbc]):({_ID})")
_PLAN_DATA = re.compile(rf"([pex]):({_ID})")
_ANSWER_DATA = re.compile(rf"([ao]):({_ID}):(0|[1-9][0-9]?)")
_DIALOG_DATA = re.compile(rf"([ywn]):({_ID}):([0-9a-f]{{8}})")


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


def parse_callback(data: str) -> Callback | None:
    """The button a callback came from, or None for anything malformed, forged or over 64 bytes.

    Only the shape is checked here: whether the agent or question exists, whether the option index is
    within the question's options, and whether the user may press it, is for the caller to check.
    """
    if len(data.encode("utf-8", "replace")) > CALLBACK_MAX_BYTES:
        return None
    if m := _AGENT_DATA.fullmatch(data):
        return Callback(Action(m.group(1)), m.group(2))
    if m := _PLAN_DATA.fullmatch(data):
        return Callback(Action(m.group(1)), m.group(2))
    if m := _ANSWER_DATA.fullmatch(data):
        return Callback(Action(m.group(1)), m.group(2), int(m.group(3)))
    if m := _DIALOG_DATA.fullmatch(data):
        return Callback(Action(m.group(1)), m.group(2), prompt=f"p-{m.group(3)}")
    return None
