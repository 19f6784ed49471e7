"""What a task gets for a field its adder leaves out. Plain numbers, so the CLI's help can name them
without loading the task model (pydantic)."""

from __future__ import annotations

DEFAULT_PRIORITY = 5
DEFAULT_MAX_ATTEMPTS = 3
DEFAULT_MAX_BODY_BYTES = 256 * 1024
