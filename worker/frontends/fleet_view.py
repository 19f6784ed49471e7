"""Many agents on one screen: the dashboard lays out only the rows it shows (a screen of 40 lines costs the
same at 10,000 agents as at 40), and a plain snapshot, which has no height, counts them by project and
state instead of printing a line for each. Pure.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from typing import Protocol, overload

from rich.text import Text

MANY = 200  # agents above which a plain snapshot shows one line per project
NO_PROJECT = "(no project)"


class Rows(Sequence[Text]):
    """`count` rows, each laid out by `make(i)` only when it is shown."""

    def __init__(self, count: int, make: Callable[[int], Text]) -> None:
        self.size = count
        self.make = make

    def __len__(self) -> int:
        return self.size

    @overload
    def __getitem__(self, index: int) -> Text: ...

    @overload
    def __getitem__(self, index: slice) -> list[Text]: ...

    def __getitem__(self, index: int | slice) -> Text | list[Text]:
        if isinstance(index, slice):
            return [self.make(i) for i in range(*index.indices(self.size))]
        if not -self.size <= index < self.size:
            raise IndexError(index)
        return self.make(index % self.size)

    def __iter__(self) -> Iterator[Text]:
        return (self.make(i) for i in range(self.size))


class Shown(Protocol):
    @property
    def project(self) -> str: ...

    @property
    def state(self) -> str: ...


def by_project(agents: Sequence[Shown]) -> list[tuple[str, int, list[tuple[str, int]]]]:
    """(project, agents, [(state, how many)] most first) for each project, by name; agents of no project
    last."""
    states: dict[str, Counter[str]] = {}
    for a in agents:
        states.setdefault(a.project or NO_PROJECT, Counter())[a.state] += 1
    order = sorted(states, key=lambda p: (p == NO_PROJECT, p))
    return [
        (p, sum(states[p].values()), sorted(states[p].items(), key=lambda s: (-s[1], s[0]))) for p in order
    ]


def project_rows(agents: Sequence[Shown], styles: dict[str, str]) -> list[Text]:
    """One line per project: `  api  500 agents · running 250 · waiting 250`."""
    rows = []
    for project, count, states in by_project(agents):
        line = Text(f"  {project}", style="bold")
        line.append(f"  {count} agent{'s' if count != 1 else ''}")
        for state, n in states:
            line.append(" · ")
            line.append(f"{state} {n}", style=styles.get(state, ""))
        rows.append(line)
    return rows
