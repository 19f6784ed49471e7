"""Which source of an agent's state wins: Claude Code's hooks are exact, the pane parser is a safety net.

Pure. A state a hook decided stands until the pane shows stronger evidence: the pane is gone, the next
turn visibly runs, or the dialog the hook reported is no longer on screen. The pane never replaces a
known state with `unknown`, nor `creating`: a starting agent goes straight to what its pane shows once
the pane shows something known.
"""

from __future__ import annotations

BUSY = frozenset({"running", "compacting"})
"""Hook states that only say work is under way: the pane showing its end is stronger evidence."""


def pane_may_set(current: str, current_by: str, seen: str, told_not_drawn: bool = False) -> bool:
    """May the pane watcher replace `current` (decided by `current_by`) with the state it `seen`?
    `told_not_drawn`: a hook told of a dialog Claude Code has not drawn yet (it runs the hook first): the
    turn still on screen is no sign that the dialog was answered."""
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
    return seen in BUSY or seen == "permission"  # a dialog no hook told (auto mode's nag after a Stop)
