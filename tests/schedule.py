"""The order the test processes take the tests in: the long ones first, spread over the processes.

xdist's work stealing hands each process one contiguous share of the collection, in order, and an idle
process later steals the second half of the longest queue. In file order, the long end-to-end tests sit
together in the first shares: the process holding them ran on for minutes after the others were done.
Here every share starts with its quarter (for four processes) of the long tests, in file order so that a
module's fixtures are set up once and the real-CLI tests stay mixed with lighter ones, and is filled with
short ones, which are what stealing takes from its end.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

T = TypeVar("T")

PROGRAMS = ("claude", "codex", "gemini")


def weight(path: str, markers: set[str]) -> int:
    """1 for a test that is likely long (an end-to-end or fault scenario, a real agent CLI, `slow`), 0 for
    a unit test. Pure."""
    if markers & {*PROGRAMS, "slow"} or "/faults/" in path or "/integration/" in path:
        return 1
    return 0


def shares(total: int, processes: int) -> list[int]:
    """The sizes of the contiguous shares work stealing first hands out (as xdist 3.8 cuts them)."""
    sizes = []
    left = total
    for i in range(processes):
        size = left // (processes - i)
        sizes.append(size)
        left -= size
    return sizes


def spread(items: Sequence[T], weigh: Callable[[T], int], processes: int) -> list[T]:
    """`items` reordered so that each process's first share begins with its contiguous part of the long
    ones; the order among the long and among the short is kept. Pure."""
    heavy = [item for item in items if weigh(item) > 0]
    light = [item for item in items if weigh(item) == 0]
    if processes < 2:
        return heavy + light
    ordered: list[T] = []
    for size, part in zip(shares(len(items), processes), shares(len(heavy), processes), strict=True):
        mine, heavy = heavy[:part], heavy[part:]
        take = max(0, size - len(mine))
        ordered += mine + light[:take]
        light = light[take:]
    return ordered + heavy + light  # what did not fit (more long tests than a share holds)
