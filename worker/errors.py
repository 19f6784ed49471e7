"""Exceptions of the worker package: `WorkerError` is the base every worker failure derives from,
so the CLI can turn any of them into one clear line and an exit code."""

from __future__ import annotations


class WorkerError(Exception):
    """Base of every error the worker raises on purpose; the message names the value and the fix."""


class StatusFileError(WorkerError):
    """The status block could not be written to CLAUDE.md (read-only file or folder, disk full, ...)."""
