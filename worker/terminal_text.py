"""Text from outside (task titles, goals, questions, messages) made safe to print to a terminal: control
characters and bidi overrides shown escaped (`\\x1b`), so a title cannot clear the screen or reorder a
line. Pure."""

from __future__ import annotations

_BIDI = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def _unsafe(c: str) -> bool:
    code = ord(c)
    return code < 0x20 or 0x7F <= code < 0xA0 or c in _BIDI


def printable(text: str, keep: str = "") -> str:
    """`text` with every control character (but those in `keep`, e.g. "\\n") escaped."""
    if not any(_unsafe(c) and c not in keep for c in text):
        return text
    return "".join(
        (f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}") if _unsafe(c) and c not in keep else c
        for c in text
    )
