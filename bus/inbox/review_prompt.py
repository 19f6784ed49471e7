"""The words an agent reads when a person comments on a file of its change, from Telegram or `ib review`:
one format for both front ends, for one comment and for the comments of a review sent as one prompt."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Comment:
    """A comment on lines `first`–`last` of `path` as the person saw them; `stale` says why that view was
    out of date when the comment was made ("" when it was not)."""

    path: str
    first: int
    last: int
    text: str
    stale: str = ""


def about(comment: Comment) -> str:
    """`about `path` (lines a–b as shown)`, and that the file changed since, when it did."""
    since = "; the file has changed since" if comment.stale else ""
    return f"about `{comment.path}` (lines {comment.first}–{comment.last} as shown{since})"


def comment_prompt(path: str, first: int, last: int, text: str) -> str:
    """A comment about lines `first`–`last` of `path` as the person saw them."""
    return f"{about(Comment(path, first, last, text))}: {text}"


def changes_prompt(comments: Sequence[Comment]) -> str:
    """The comments of a review as one prompt, in the order they were made, each naming its file and
    lines; a comment of several lines keeps them, indented under its own item."""
    count = f"{len(comments)} comment" + ("" if len(comments) == 1 else "s")
    items = []
    for n, comment in enumerate(comments, 1):
        first, *rest = comment.text.strip().splitlines() or [""]
        items.append(f"{n}. {about(comment)}: {first}" + "".join(f"\n   {line}" for line in rest))
    return (
        f"Changes requested on your work ({count} from the review of your diff):\n"
        + "\n".join(items)
        + "\nAddress each of them, then commit."
    )
