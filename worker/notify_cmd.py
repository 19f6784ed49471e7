"""`ib notify`: publish a complete / waiting / question event for the person's primary session.

A hot path (hooks call it): stdlib argument parsing, the light Redis client, no pydantic, no typer.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from bus.envelope import NOTIFY_TYPES, make_event
from bus.errors import BusError
from bus.hotconf import HotConf, read_hotconf
from bus.locate import agent_from_path

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
    """A mistake in the command line; shown as one line, exit code 1."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(message)


def _parser() -> _Parser:
    p = _Parser(prog="ib notify", usage=USAGE, add_help=True)
    p.add_argument("--from", dest="sender")
    p.add_argument("--type", dest="type_", default="complete")
    p.add_argument("--project")
    p.add_argument("--task")
    p.add_argument("message", nargs="*")
    return p


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
        args = _parser().parse_args(list(argv))
        if args.type_ not in NOTIFY_TYPES:
            raise UsageError(f"unknown type {args.type_!r} (expected: {', '.join(NOTIFY_TYPES)})")
        conf = read_hotconf()
        stdin_text = sys.stdin.read() if list(args.message) == ["-"] else None
        message = build_message(args.message, stdin_text, conf.max_message_bytes)
    except (UsageError, BusError) as e:
        print(f"ib notify: error: {e}", file=sys.stderr)
        return 1
    sender = sender_of(args.sender, os.getcwd(), conf)
    agent = sender if sender not in ("unknown", "system", "user") else None
    event = make_event(args.type_, message, sender=sender, project=args.project, agent=agent, task=args.task)
    from bus.publish import publish

    published = publish(conf, event)
    if published.event_id:
        print(published.event_id)
    return 0
