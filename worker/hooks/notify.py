"""`ib notify`: publish a complete / waiting / question event for the person's primary session.

A hot path (hooks call it): stdlib argument parsing, the light Redis client, no pydantic, no typer.
"""

from __future__ import annotations

import os
import sys

from bus.errors import BusError
from bus.events.envelope import NOTIFY_TYPES, make_event
from bus.settings.hotconf import HotConf, read_hotconf
from bus.settings.repo_paths import agent_from_path
from bus.wire.names import name_problem
from bus.wire.record import Record
from worker.boundary.identity import agent_caller

TYPE_CHECKING = False  # typing costs milliseconds on the hooks' path; the checker still sees the types
if TYPE_CHECKING:
    from collections.abc import Sequence

USAGE = """ib notify [--from ID] [--type complete|waiting|question] [--project P] [--task T] MESSAGE...

Publish an event that wakes `ib listen`. MESSAGE words are joined with spaces; a single `-` reads
the message from standard input (for long text). The sender is --from, else the agent whose worktree
this is, else IB_AGENT_ID, else "unknown". When Redis cannot be reached the event is spooled and sent
later; the command still exits 0.

examples:
  ib notify "build finished"
  ib notify --type question --from agent-ab12 "Which database should I use?"
  git log -1 | ib notify --type waiting -
"""


class UsageError(Exception):
    """A mistake in the command line; shown as one line, exit code 2 (as every `ib` usage error)."""


class NotifyArgs(Record):
    __slots__ = ("help", "message", "project", "sender", "task", "type_")

    def __init__(
        self,
        sender: str | None,
        type_: str,
        project: str | None,
        task: str | None,
        message: list[str],
        help: bool,
    ) -> None:
        self.sender, self.type_, self.project, self.task, self.message, self.help = (
            sender,
            type_,
            project,
            task,
            message,
            help,
        )


OPTIONS = {"--from": "sender", "--type": "type_", "--project": "project", "--task": "task"}


def parse_args(argv: Sequence[str]) -> NotifyArgs:
    """The command line, by hand: argparse costs ~10 ms to import and set up on this hot path."""
    values: dict[str, str] = {}
    words: list[str] = []
    items = list(argv)
    while items:
        item = items.pop(0)
        name, eq, inline = item.partition("=")
        if item in ("-h", "--help"):
            return NotifyArgs(None, "complete", None, None, [], True)
        if item == "--":
            words.extend(items)
            break
        if name in OPTIONS:
            if not eq and not items:
                raise UsageError(f"{name} requires a value")
            values[OPTIONS[name]] = inline if eq else items.pop(0)
        elif item.startswith("--"):
            raise UsageError(f"unknown option {item!r} (see ib notify --help)")
        else:
            words.append(item)
    return NotifyArgs(
        values.get("sender"),
        values.get("type_", "complete"),
        values.get("project"),
        values.get("task"),
        words,
        False,
    )


def build_message(words: Sequence[str], stdin_text: str | None, limit: int) -> str:
    """The message text, checked: not empty, valid UTF-8, within the size limit."""
    text = stdin_text if list(words) == ["-"] and stdin_text is not None else " ".join(words)
    if not text.strip():
        raise UsageError("message required (give it as arguments, or `-` to read standard input)")
    try:
        size = len(text.encode("utf-8"))
    except UnicodeEncodeError as e:
        bad = text[e.start].encode("utf-8", "surrogateescape")
        raise UsageError(f"message is not valid UTF-8 (byte {bad!r} at character {e.start})") from e
    if size > limit:
        raise UsageError(f"message is {size} bytes; the limit is {limit} (setting IB_MAX_MESSAGE_BYTES)")
    return text


def sender_of(explicit: str | None, cwd: str, conf: HotConf) -> str:
    return explicit or agent_from_path(cwd) or conf.agent_id or "unknown"


def main(argv: Sequence[str]) -> int:
    try:
        args = parse_args(argv)
        if args.help:
            print(USAGE)
            return 0
        if args.type_ not in NOTIFY_TYPES:
            raise UsageError(f"unknown type {args.type_!r} (expected: {', '.join(NOTIFY_TYPES)})")
        for option, value in (("--from", args.sender), ("--project", args.project), ("--task", args.task)):
            problem = None if value is None else name_problem(option.removeprefix("--"), value)
            if problem:
                raise UsageError(f"{option}: {problem}")
        conf = read_hotconf()
        stdin_text = sys.stdin.read() if list(args.message) == ["-"] else None
        message = build_message(args.message, stdin_text, conf.max_message_bytes)
    except UsageError as e:
        print(f"ib notify: error: {e}", file=sys.stderr)
        return 2
    except BusError as e:
        print(f"ib notify: error: {e}", file=sys.stderr)
        return 1
    sender = sender_of(args.sender, os.getcwd(), conf)
    caller = agent_caller()
    if caller is not None and sender != caller.id:  # an agent notifies as itself only
        print(
            f"ib notify: error: agent {caller.id} may not notify as {sender!r} (only as itself)",
            file=sys.stderr,
        )
        return 1
    agent = sender if sender not in ("unknown", "system", "user") else None
    event = make_event(args.type_, message, sender=sender, project=args.project, agent=agent, task=args.task)
    from bus.events.publish import publish

    try:
        published = publish(conf, event)
    except BusError as e:  # Redis away and nowhere to keep the event: say so, fail the command
        print(f"ib notify: error: {e}", file=sys.stderr)
        return 1
    if published.event_id:
        print(published.event_id)
    return 0
