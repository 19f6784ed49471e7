"""The words an agent reads when a person comments on a file of its change, from Telegram or `ib review`:
one format for both front ends."""

from __future__ import annotations


def comment_prompt(path: str, first: int, last: int, text: str) -> str:
    """A comment about lines `first`–`last` of `path` as the person saw them."""
    return f"about `{path}` (lines {first}–{last} as shown): {text}"
