"""The Stop hook's summary of a task it finishes: the last message's first line."""

from __future__ import annotations

import pytest

from worker.hooks.stop import SUMMARY_CHARS, task_summary

CASES = {
    "first-line": ("Painted it blue.\nDetails...\n\nI HAVE COMPLETED THE GOAL", "Painted it blue."),
    "leading-blank-lines": ("\n\n  Done it.  \nI HAVE COMPLETED THE GOAL", "Done it."),
    "marker-only": ("I HAVE COMPLETED THE GOAL", ""),
    "empty": ("", ""),
    "long-line": ("x" * 2000, "x" * SUMMARY_CHARS),
}


@pytest.mark.parametrize(("message", "summary"), CASES.values(), ids=CASES.keys())
def test_task_summary(message: str, summary: str) -> None:
    assert task_summary(message) == summary
