"""One agent's change for review: the file list with counts and marks, a picture per text file, or the whole
diff as a document when it is too big for pictures. Runs git through worker.agents.views; the rest is pure.
"""

from __future__ import annotations

import base64
from typing import Any

from worker.agents.ownership import AgentRef
from worker.agents.views import diff_text
from worker.review.diff_files import FileDiff, parse_diff, printable
from worker.review.diff_picture import render_file
from worker.runtime import Runtime

MAX_PICTURE_LINES = 3000  # changed lines of the whole diff above which it goes as one document
MAX_PICTURE_FILES = 20


def describe(diff: FileDiff) -> dict[str, Any]:
    """What the file list shows of one file, and the fingerprint a reply to its picture is checked with."""
    return {
        "path": printable(diff.path),
        "old_path": printable(diff.old_path),
        "status": diff.status,
        "binary": diff.binary,
        "added": diff.added,
        "removed": diff.removed,
        "digest": diff.digest,
    }


def too_big(files: list[FileDiff]) -> bool:
    changed = sum(f.added + f.removed for f in files)
    return changed > MAX_PICTURE_LINES or len(files) > MAX_PICTURE_FILES


def review_of(text: str, pictures: bool = True) -> dict[str, Any]:
    """The reply for `text` (what `git diff` printed): files, their pictures, or the document."""
    files = parse_diff(text)
    if not files:
        return {"files": [], "note": text.strip()}
    reply: dict[str, Any] = {"files": [describe(f) for f in files]}
    if not pictures:
        return reply
    if too_big(files):
        reply["document"] = text
        return reply
    for entry, diff in zip(reply["files"], files, strict=True):
        if diff.binary or not diff.hunks:
            continue
        picture = render_file(diff)
        entry["picture"] = {
            "png": base64.b64encode(picture.png).decode("ascii"),
            "first": picture.first,
            "last": picture.last,
            "omitted": picture.omitted,
        }
    return reply


def review(rt: Runtime, agent: AgentRef, pictures: bool = True) -> dict[str, Any]:
    """The agent's change since it left its base branch: for /diff, or (no pictures) to check a reply."""
    return review_of(diff_text(rt, agent), pictures)
