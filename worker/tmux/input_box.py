"""What sits in an agent's input box, read from pane text (Claude Code's box between two rules), and
whether a message sent there is in it: shown before Enter, still there after it (Enter taken by a
completion menu, e.g. after `@path`). Pure."""

from __future__ import annotations

import re

_RULE = re.compile(r"^\s*─{8,}\s*$")
_PROMPTS = ("❯", ">")
_PASTED = ("[pasted text", "[pasted content")
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


def still_typed(box: str | None, text: str) -> bool:
    """Does the input box, as a program's `input_text` read it, hold `text` (or the placeholder a long
    paste shows: Claude Code's "[Pasted text #1 +40 lines]", Gemini CLI's "[Pasted Text: 50 lines]", Codex
    CLI's "[Pasted Content 1200 chars]")?"""
    if not box:
        return False
    if box.casefold().startswith(_PASTED):
        return True
    start = probe(text)
    return bool(start) and box.startswith(start)


def arriving(box: str | None, text: str) -> bool:
    """Does the input box show the start of `text` but not yet enough of it to tell it is there (a
    program drawing a burst of keys one by one on a busy machine)? An Enter then would send that part."""
    if not box or still_typed(box, text):
        return False
    return _first_line(text).startswith(box)


def probe(text: str) -> str:
    """What identifies a message wherever a program shows it: the start of its first line."""
    return _first_line(text)[:PROBE_CHARS]


def _first_line(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), "")
