"""Which agent program drew a pane capture, from the signs each one leaves on its screen (its banner, its
input box's words, its turn and dialog lines). Pure; for reading a capture whose program is not named
(`ib parse-state` without `--cli`)."""

from __future__ import annotations

import re

_SIGNS: dict[str, tuple[re.Pattern[str], ...]] = {
    "claude": tuple(
        re.compile(p, re.MULTILINE)
        for p in (
            r"Claude Code v\d",
            r"^\s*[●⏺] ",
            r"^❯ ",
            r"\((?:esc|Esc) to interrupt\b",
            r"⏵⏵|\b(?:auto|manual) mode on\b",
        )
    ),
    "codex": tuple(
        re.compile(p, re.MULTILINE)
        for p in (
            r">_ OpenAI Codex",
            r"Ask Codex to do anything",
            r"^\s*• Working \(",
            r"Worked for \d",
            r"Would you like to run the following command\?",
            r"codex resume",
            r"^\s*› ",
            r"Welcome to Codex\b",  # the sign-in screen, before any session
        )
    ),
    "gemini": tuple(
        re.compile(p, re.MULTILINE)
        for p in (
            r"Type your message or @path/to/file",
            r"Authenticated with gemini",
            r"^\s*✦ ",
            r"Allow execution of",
            r"Apply this change\?",
            r"\bgemini-\d",
        )
    ),
}


def program_of_screen(screen: str) -> str | None:
    """The name of the program whose signs the capture shows most; None when it shows none, or two
    programs show as many."""
    counts = {name: sum(1 for sign in signs if sign.search(screen)) for name, signs in _SIGNS.items()}
    best = max(counts.values())
    leaders = [name for name, count in counts.items() if count == best]
    return leaders[0] if best and len(leaders) == 1 else None
