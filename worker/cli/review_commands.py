"""`ib review AGENT`: the review from the phone, in the terminal. The file list, one file's change with its
old and new line numbers (highlighted like the /diff pictures), comments on it kept with those made in
Telegram (bus.inbox.review_comments), and --request-changes, which sends them to the agent as one prompt."""

from __future__ import annotations

import re

import typer

from bus.errors import InvalidInput
from bus.inbox.review_prompt import Comment, changes_prompt, comment_prompt
from bus.settings.repo_paths import agent_from_path
from worker.cli.context import Context
from worker.cli.output import console
from worker.review.diff_files import FileDiff, parse_diff, printable

LINES = re.compile(r"^\s*(\d+)\s*(?:[-–]\s*(\d+))?\s*$")


def file_list(files: list[FileDiff]) -> list[str]:
    """One line a file: its number (what `ib review AGENT N` takes), counts, path and marks."""
    from worker.review.review import describe

    out = []
    for number, diff in enumerate(files, 1):
        entry = describe(diff)
        counts = "binary" if diff.binary else f"+{entry['added']} -{entry['removed']}"
        mark = {"added": " (added)", "deleted": " (deleted)"}.get(diff.status, "")
        if diff.status == "renamed":
            mark = f" (renamed from {entry['old_path']})"
        out.append(f"{number:>3}  {counts:>11}  {entry['path']}{mark}")
    return out


def pick(files: list[FileDiff], wanted: str) -> FileDiff:
    """The file named by its number in the list or by its path; else one line saying what there is."""
    if wanted.isdigit() and 1 <= int(wanted) <= len(files):
        return files[int(wanted) - 1]
    for diff in files:
        if wanted in (diff.path, printable(diff.path)):
            return diff
    raise InvalidInput(f"no file {wanted!r} in this change: give a path or a number from 1 to {len(files)}")


def line_range(spec: str) -> tuple[int, int]:
    match = LINES.match(spec)
    if not match:
        raise InvalidInput(f"--lines {spec!r} is not a range: write it as A-B (e.g. 10-24) or one number")
    first = int(match.group(1))
    last = int(match.group(2) or first)
    if last < first:
        raise InvalidInput(f"--lines {spec!r} ends before it starts: write the smaller number first")
    return first, last


def review(
    agent_id: str = typer.Argument(..., help="agent id"),
    file: str = typer.Argument(None, help="a file of the change: its path or its number in the list"),
    comment: str = typer.Option(None, "--comment", "-c", help="keep this about FILE for --request-changes"),
    lines: str = typer.Option(None, "--lines", help="A-B: the lines it is about (default: all shown)"),
    request_changes: bool = typer.Option(
        False, "--request-changes", help="send the comments waiting (also Telegram's) as one prompt"
    ),
) -> None:
    """Review an agent's change: the file list; with FILE, its diff; --comment keeps a note on it, and
    --request-changes sends every note waiting (from here or Telegram) to the agent as one prompt.

    Example: ib review agent-1 calc.py --lines 3-5 --comment "use sum() here"
    Then:    ib review agent-1 --request-changes
    """
    ctx = Context()
    if file is None and comment is not None:
        raise InvalidInput("name the file the comment is about: ib review AGENT FILE --comment TEXT")
    if comment is not None or not request_changes:
        _show_or_comment(ctx, agent_id, file, comment, lines)
    if request_changes:
        _request_changes(ctx, agent_id)


def _show_or_comment(
    ctx: Context, agent_id: str, file: str | None, comment: str | None, lines: str | None
) -> None:
    from rich.markup import escape
    from rich.text import Text

    from bus.commands.worker_commands import Diff
    from worker.review.diff_picture import file_rows

    if comment is not None and file is not None:
        said, waiting = keep_comment(ctx, agent_id, file, comment, lines)
        console().print(escape(f"kept for {agent_id} ({waiting} waiting): {said}"))
        console().print(escape(f"send them with: ib review {agent_id} --request-changes"))
        return
    text = str(ctx.on_owner(Diff(agent=agent_id)))
    files = parse_diff(text)
    if not files:
        print(text, end="")
        return
    if file is None:
        console().print(escape("\n".join(file_list(files))))
        return
    rows, _ = file_rows(pick(files, file), width=max(console().width, 40), max_lines=10**9)
    for row in rows:
        console().print(Text.assemble(*row), soft_wrap=True)


def keep_comment(ctx: Context, agent_id: str, file: str, comment: str, lines: str | None) -> tuple[str, int]:
    """Keep a comment on `file` of the agent's change (about `lines`, A-B, or every line its diff shows)
    until the changes are requested; the prompt line it becomes and how many comments wait."""
    from bus.commands.worker_commands import Diff
    from bus.inbox.review_comments import ReviewComments
    from worker.review.diff_picture import file_rows

    text = str(ctx.on_owner(Diff(agent=agent_id)))
    files = parse_diff(text)
    if not files:
        raise InvalidInput(f"{agent_id} has no changes to comment on: {text.strip()}")
    diff = pick(files, file)
    if not comment.strip():
        raise InvalidInput("the comment is empty: write what the agent should know")
    if lines:
        first, last = line_range(lines)
    else:
        shown = file_rows(diff, max_lines=10**9)[1]
        first, last = shown.first, shown.last
    path = printable(diff.path)
    waiting = ReviewComments(ctx.client, ctx.keys).add(agent_id, Comment(path, first, last, comment))
    return comment_prompt(path, first, last, comment), waiting


def _request_changes(ctx: Context, agent_id: str) -> None:
    from rich.markup import escape

    console().print(escape(f"sent to {agent_id}:\n{request_changes(ctx, agent_id)}"))


def request_changes(ctx: Context, agent_id: str) -> str:
    """Every comment waiting for the agent, as one prompt (what was sent); they go once the agent's worker
    has it."""
    from bus.commands.worker_commands import Send
    from bus.inbox.review_comments import ReviewComments

    store = ReviewComments(ctx.client, ctx.keys)
    comments, read = store.waiting(agent_id)
    if not comments:
        raise InvalidInput(
            f"no comments waiting for {agent_id}: add some with ib review {agent_id} FILE --comment TEXT "
            "(or reply to a /diff picture in Telegram); nothing was sent"
        )
    prompt = changes_prompt(comments)
    ctx.on_owner(Send(agent=agent_id, text=prompt, sender=agent_from_path(ctx.cwd) or ctx.settings.agent_id))
    store.sent(agent_id, read)
    return prompt
