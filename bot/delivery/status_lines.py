"""The live status line of each agent's topic as the outbox keeps it: the latest text wanted (the
latest always wins), the message that shows it, and what to do next to make the two agree.

Pure. A status line is one message at the bottom of the topic: edited in place, moved to the bottom
when another message went below it (the old one deleted first, so two never show at once), deleted
when the turn ends.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

STATUS_EVERY = 10.0  # Telegram seconds between two changes of one topic's status line
STATUS_RESERVE = 8  # a status change never spends the minute's last units: they are for events and output


class StatusStep(NamedTuple):
    """Send `text` as a new message (edit None), edit message `edit` to it, or delete message `delete`."""

    text: str
    edit: int | None = None
    delete: int | None = None


@dataclass
class StatusLine:
    wanted: str = ""  # "" : no status line (the agent is not working)
    shown: str = ""
    message_id: int | None = None
    buried: bool = False  # a message went below it: its next change moves it to the bottom
    changed_at: float = -math.inf

    def step(self) -> StatusStep | None:
        """What would bring the topic in line with `wanted`; None when it is."""
        if self.message_id is not None and (not self.wanted or self.buried):
            return StatusStep("", delete=self.message_id)
        if not self.wanted:
            return None
        if self.message_id is None:
            return StatusStep(self.wanted)
        return None if self.wanted == self.shown else StatusStep(self.wanted, edit=self.message_id)

    def due(self, now: float, every: float) -> bool:
        """Whether the step may go now: a removal at once, changes (a move included) at most once every
        `every`."""
        step = self.step()
        if step is None:
            return False
        return (step.delete is not None and not self.wanted) or now >= self.changed_at + every

    def done(self, step: StatusStep, now: float, message_id: int | None) -> None:
        """Telegram accepted `step`."""
        if step.delete is not None:
            if step.delete == self.message_id:
                self.message_id, self.shown, self.buried = None, "", False
            return
        if step.edit is None:
            self.message_id, self.buried = message_id, False
        self.shown, self.changed_at = step.text, now

    def failed(self, step: StatusStep, now: float, gone: bool) -> None:
        """Telegram refused `step`: a message that is gone is forgotten; anything else waits a turn."""
        if gone and step.delete is not None:
            self.done(step, now, None)
        elif gone and step.edit is not None:
            self.message_id, self.shown = None, ""
        else:
            self.changed_at = now
