"""Which source of an agent's state wins: Claude Code's hooks are exact, the pane parser is a safety net.

Pure. A state a hook decided stands until the pane shows stronger evidence: the pane is gone, the next
turn visibly runs, or the dialog the hook reported is no longer on screen. The pane never replaces a
known state with `unknown`, nor `creating`: a starting agent goes straight to what its pane shows once
the pane shows something known.
"""

from __future__ import annotations

BUSY = frozenset({"running", "compacting"})
"""Hook states that only say work is under way: the pane showing its end is stronger evidence."""
END_DRAW_WAIT = 3.0
"""Seconds after a hook told a turn's end within which the turn still on the pane is taken as not redrawn
yet (the program runs its turn-end hook before it draws the idle screen; relayed hooks and busy machines
widen the gap), rather than as the next turn: a start of the next turn is told by its own hook."""


def pane_may_set(current: str, current_by: str, seen: str, told_not_drawn: bool = False) -> bool:
    """May the pane watcher replace `current` (decided by `current_by`) with the state it `seen`?
    `told_not_drawn`: a hook told of a dialog or a turn's end the program has not drawn yet (it runs the
    hook first, and a busy machine draws late): the turn still on screen is no sign that the dialog was
    answered, nor that the next turn began."""
    if seen == current:
        return False
    if seen == "stopped":
        return True  # the pane is gone (or dead): nothing is stronger
    if seen == "unknown":
        return current == ""  # from `creating` straight to what the pane shows once it shows something
    if current_by != "hook" or current in BUSY:
        return True
    if current == "permission":  # the pane reads something else: the dialog was answered
        return seen != "creating" and not (told_not_drawn and seen in BUSY)
    # the next turn, once the end the hook told is drawn (or long past); or a dialog no hook told (auto
    # mode's nag after a Stop)
    return (seen in BUSY and not told_not_drawn) or seen == "permission"


def ended_not_drawn(current: str, current_by: str, since: float, now: float) -> bool:
    """Whether `current` is a turn's end (or other settled state) a hook told moments ago, which the
    program may not have drawn yet (END_DRAW_WAIT)."""
    settled = current not in BUSY and current not in ("", "permission", "stopped", "creating")
    return current_by == "hook" and settled and 0 <= now - since < END_DRAW_WAIT
