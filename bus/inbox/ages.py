"""How ittybus shows an age to a person (`ib list`, `ib questions`, the status block, reminders). Pure."""

from __future__ import annotations


def format_age(seconds: float) -> str:
    """`42s`, `5m`, `3h`, `2d`: the largest whole unit, as `ib list` shows ages."""
    whole = max(0, int(seconds))
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if whole >= size:
            return f"{whole // size}{unit}"
    return f"{whole}s"
