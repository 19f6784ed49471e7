"""Checks of command-line values that typer's types let through (`nan`, `inf`, negative durations)."""

from __future__ import annotations

import math

import typer


def _duration(value: float | None, unit: str) -> float | None:
    if value is None:
        return None
    if not math.isfinite(value) or value < 0:
        raise typer.BadParameter(f"{value} is not a duration: give a number of {unit}, 0 or more")
    return value


def seconds(value: float | None) -> float | None:
    """Typer callback: a finite, non-negative number of seconds (None: not given)."""
    return _duration(value, "seconds")


def minutes(value: float | None) -> float | None:
    """Typer callback: a finite, non-negative number of minutes (None: not given)."""
    return _duration(value, "minutes")
