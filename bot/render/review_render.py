"""The words of a review from the phone: the file list /diff sends first, each picture's caption, the prompt a
reply to a picture becomes, and the anchor that ties a picture to its file. Pure.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import Any

from bot.render.render import escape
from bus.inbox.review_prompt import Comment
from bus.tasks.merge_request import MergeRequest

ANCHOR_PREFIX = "review:"  # a /diff picture's anchor: a reply to it is a comment on that file
CAPTION_MARK = "📄"  # how a reply to a picture whose record expired is still recognised
MAX_LISTED = 60  # files named in the list; the rest are counted
MAX_CAPTION_PATH = 300  # characters of a path in a caption (Telegram allows 1,024 in all); its end is kept


@dataclass(frozen=True)
class Shown:
    """What one picture shows: replies to it are about this."""

    agent: str
    path: str
    first: int
    last: int
    digest: str

    def anchor(self) -> str:
        return ANCHOR_PREFIX + json.dumps(asdict(self), ensure_ascii=False)


def shown_from(anchor: str) -> Shown | None:
    """The record of an anchor (or of what Redis kept of it); None when it is not one."""
    try:
        data = json.loads(anchor.removeprefix(ANCHOR_PREFIX))
        return Shown(
            str(data["agent"]), str(data["path"]), int(data["first"]), int(data["last"]), str(data["digest"])
        )
    except (ValueError, KeyError, TypeError):
        return None


def _mark(entry: dict[str, Any]) -> str:
    marks = []
    status = entry.get("status")
    if status == "renamed":
        marks.append(f"renamed from {entry.get('old_path')}")
    elif status in ("added", "deleted"):
        marks.append(str(status))
    return f" ({', '.join(marks)})" if marks else ""


def file_line(entry: dict[str, Any]) -> str:
    counts = "binary" if entry.get("binary") else f"+{entry.get('added', 0)} −{entry.get('removed', 0)}"
    return f"{counts}  {entry.get('path')}{_mark(entry)}"


def file_list(agent: str, files: list[dict[str, Any]], as_document: bool) -> str:
    """One message: every changed file with its counts and marks (HTML)."""
    added = sum(int(f.get("added", 0)) for f in files)
    removed = sum(int(f.get("removed", 0)) for f in files)
    plural = "s" if len(files) != 1 else ""
    head = f"<b>{escape(agent)}</b> changed {len(files)} file{plural} (+{added} −{removed})"
    lines = [escape(file_line(f)) for f in files[:MAX_LISTED]]
    if len(files) > MAX_LISTED:
        lines.append(escape(f"… and {len(files) - MAX_LISTED} more files"))
    tail = (
        "Too big for pictures: the whole diff follows as a file."
        if as_document
        else (
            "Reply to a file's picture to comment on it; ✎ Request changes sends your comments to the agent "
            "as one prompt."
        )
    )
    return head + "\n<pre>" + "\n".join(lines) + "</pre>\n" + escape(tail)


def caption(entry: dict[str, Any], picture: dict[str, Any]) -> str:
    lines = f"lines {picture.get('first')}–{picture.get('last')}"
    omitted = int(picture.get("omitted") or 0)
    more = f" · {omitted} more lines not drawn" if omitted else ""
    path = str(entry.get("path"))
    path = path if len(path) <= MAX_CAPTION_PATH else "…" + path[-MAX_CAPTION_PATH:]
    return f"{CAPTION_MARK} <code>{escape(path)}</code> · {lines}{more}"


def comment_of(shown: Shown, text: str, stale: str | None) -> Comment:
    """A reply to a picture of the change, as a comment waiting for Request changes."""
    return Comment(shown.path, shown.first, shown.last, text, stale or "")


def noted(agent: str, waiting: int, stale: str | None) -> str:
    """What the person reads once a comment is kept (plain text)."""
    count = f"{waiting} comment" + ("" if waiting == 1 else "s")
    head = f"⚠ {stale}: the comment is kept as written, about the lines shown. " if stale else "✍ "
    return f"{head}{count} waiting for {agent}: press ✎ Request changes under the file list to send them."


def requested(agent: str, sent: int) -> str:
    return f"✎ Changes requested from {agent}: {sent} comment{'' if sent == 1 else 's'} sent as one prompt."


def staleness(shown: Shown, files: list[dict[str, Any]]) -> str | None:
    """Why the picture no longer shows the file as it is now, or None when it still does."""
    now = next((f for f in files if f.get("path") == shown.path), None)
    if now is None:
        return f"{shown.path} is no longer in {shown.agent}'s change"
    if now.get("digest") != shown.digest:
        return f"{shown.path} changed since that picture was sent"
    return None


def queued_stage(place: object) -> str:
    """An approved change just queued: its place in merge order, as the worker said it."""
    return f"in the merge queue, position {place}" if isinstance(place, int) else "in the merge queue"


def merge_stage(req: MergeRequest | None, place: int | None) -> str:
    """Where an approved change stands, in one line: waiting (and where), merging, or how it ended."""
    if req is None:
        return "? its merge request is gone; /merges shows the queue"
    if req.status == "merging":
        return f"⇢ merging into {req.target}…"
    if req.status == "merged":
        return f"✓ merged into {req.target}" + (f" ({req.sha[:7]})" if req.sha else "")
    if req.status == "conflict":
        return "⚠ merge conflict in " + (", ".join(req.files) or "its files") + "; nothing was merged"
    if req.status == "failed":
        return f"✗ merge failed: {req.error or 'no reason given'}"
    return "⏳ " + queued_stage(place)


def approval(agent: str, where: str, stage: str, dropped: int) -> str:
    """The first lines of Approve's message (plain text): what was approved, where it stands, and the comments
    that Request changes never sent, which approving drops."""
    unsent = f"{dropped} comment(s) not sent with Request changes were dropped" if dropped else None
    return "\n".join(line for line in (f"✓ {agent} approved ({where})", stage, unsent) if line)
