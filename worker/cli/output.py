"""Writing to the terminal: JSONL lines that reach a pipe at once, and the one-line error format."""

from __future__ import annotations

import sys

from bus.envelope import Envelope, to_jsonl


def emit_jsonl(event: Envelope) -> None:
    sys.stdout.write(to_jsonl(event) + "\n")
    sys.stdout.flush()


def error_line(command: str, message: str) -> str:
    return f"ib {command}: error: {message}".replace("ib : ", "ib: ")
