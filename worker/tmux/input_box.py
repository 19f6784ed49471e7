"""What sits in an agent's input box, read from pane text, and whether a message sent there is still in
it (Enter taken by a completion menu, e.g. after `@path`). Pure."""

from __future__ import annotations

import re

_RULE = re.compile(r"^\s*─{8,}\s*$")
_PROMPTS = ("❯", ">")
PROBE_CHARS = 24  # how much of a message's first line identifies it in the box


def input_text(pane: str) -> str | None:
    """The text after the prompt in the input box (the last "❯"/">" line between two rules, or after the
    last rule); None when no input box is on screen."""
    lines = [line.rstrip() for line in pane.splitlines()]
    rules = [i for i, line in enumerate(lines) if _RULE.match(line)]
    for index in reversed(rules):
        after = lines[index + 1] if index + 1 < len(lines) else ""
        stripped = after.lstrip()
        for prompt in _PROMPTS:
            if stripped.startswith(prompt):
                return stripped[len(prompt) :].strip()
    return None


def still_typed(pane: str, text: str) -> bool:
    """Is `text` (just sent with Enter) still in the input box, unsubmitted?"""
    box = input_text(pane)
    if not box:
        return False
    if box.startswith("[Pasted text"):
        return True
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    probe = first[:PROBE_CHARS]
    return bool(probe) and box.startswith(probe)
