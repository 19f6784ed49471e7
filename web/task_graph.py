"""The task graph laid out for the page: each task a box in the column of its layer (the longest chain of
dependencies before it), an arrow from each dependency to the task that waits for it. Tasks in, boxes and
edges with coordinates out; a cycle or a dependency that is not there never hangs or fails it. Pure.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

BOX_W, BOX_H = 176, 42
GAP_X, GAP_Y = 56, 14
MARGIN = 8
MAX_LABEL = 22  # characters of a box's first line; the whole id is in its tooltip and the table
MAX_NOTE = 16  # characters of the note on its second line, after the state
MISSING = "missing"  # the state of a dependency no task of the graph has


@dataclass(frozen=True)
class Node:
    """A task as the layout needs it: what it waits for, and what orders it inside its layer."""

    id: str
    state: str
    after: tuple[str, ...] = ()
    priority: int = 0  # higher first, when the tasks it waits for do not decide the order
    note: str = ""  # the box's second line after the state (the agent on it)
    title: str = ""  # the box's tooltip


@dataclass(frozen=True)
class Box:
    id: str
    label: str  # the id, cut to MAX_LABEL characters
    state: str
    note: str
    title: str
    layer: int
    x: int
    y: int
    ghost: bool = False  # a dependency outside the graph (another project's task, or none at all)


@dataclass(frozen=True)
class Edge:
    source: str  # the dependency
    target: str  # the task that waits for it
    path: str  # the SVG path, from the right side of `source` to the left side of `target`
    kind: str  # "done" (the dependency is done), "open", or "cycle" (an arrow the layers could not honour)


@dataclass(frozen=True)
class Graph:
    boxes: tuple[Box, ...]
    edges: tuple[Edge, ...]
    width: int
    height: int
    layers: int

    @property
    def box_size(self) -> tuple[int, int]:
        return BOX_W, BOX_H


def layers(nodes: Sequence[Node]) -> dict[str, int]:
    """Each task's layer: 0 for a task that waits for none of the others, else one more than the deepest of
    those it waits for. A cycle is broken at one of its tasks, taken as if its dependencies not placed yet
    were not there; the tasks downstream of the cycle stay after it."""
    known = _unique(nodes)
    deps = {
        n.id: tuple(dict.fromkeys(d for d in n.after if d in known and d != n.id)) for n in known.values()
    }
    waiting = {i: len(d) for i, d in deps.items()}
    dependants: dict[str, list[str]] = {i: [] for i in known}
    for task_id, its_deps in deps.items():
        for dep in its_deps:
            dependants[dep].append(task_id)
    found: dict[str, int] = {}
    ready = [i for i, count in waiting.items() if count == 0]
    in_order = sorted(known, key=lambda i: _order(known[i]))
    first = 0  # every task before it in `in_order` is placed
    while len(found) < len(known):
        if not ready:
            while in_order[first] in found:
                first += 1
            ready.append(_on_a_cycle(in_order[first], deps, found))
        task_id = ready.pop()
        found[task_id] = max((found[d] + 1 for d in deps[task_id] if d in found), default=0)
        for waiter in dependants[task_id]:
            waiting[waiter] -= 1
            if waiting[waiter] == 0 and waiter not in found:
                ready.append(waiter)
    return found


def _on_a_cycle(start: str, deps: Mapping[str, tuple[str, ...]], found: Mapping[str, int]) -> str:
    """A task on a cycle upstream of `start`, which waits (so every task it waits for not placed yet waits as
    well): following the first such dependency comes back to a task already passed, which is on a cycle."""
    passed: set[str] = set()
    task_id = start
    while task_id not in passed:
        passed.add(task_id)
        task_id = next(d for d in deps[task_id] if d not in found)
    return task_id


def layout(nodes: Sequence[Node], elsewhere: Mapping[str, str] | None = None) -> Graph:
    """The graph of `nodes` drawn left to right, a column per layer; a dependency that is none of them gets a
    dashed box in the first column, in its state in `elsewhere` (another project's tasks) or MISSING."""
    known = _unique(nodes)
    states = elsewhere or {}
    ghosts = {d: states.get(d, MISSING) for n in known.values() for d in n.after if d not in known}
    layer = layers([*known.values(), *(Node(g, state) for g, state in ghosts.items())])
    columns: dict[int, list[str]] = {}
    for task_id in sorted(layer, key=lambda i: (layer[i], i)):
        columns.setdefault(layer[task_id], []).append(task_id)
    row: dict[str, float] = {}
    for depth in sorted(columns):
        ids = columns[depth]
        ids.sort(key=lambda i: (_mean_row(known.get(i), row, layer), *_order(known.get(i) or Node(i, ""))))
        row.update({i: float(place) for place, i in enumerate(ids)})
    boxes = tuple(_box(i, known.get(i), ghosts.get(i, ""), layer[i], int(row[i])) for i in layer)
    at = {b.id: b for b in boxes}
    state = {b.id: b.state for b in boxes}
    edges = sorted(
        (
            Edge(dep, n.id, _path(at[dep], at[n.id]), _kind(state[dep], layer[dep] >= layer[n.id]))
            for n in known.values()
            for dep in dict.fromkeys(n.after)
            if dep != n.id
        ),
        key=lambda e: (at[e.source].layer, at[e.source].y, at[e.target].layer, at[e.target].y),
    )
    tallest = max((len(ids) for ids in columns.values()), default=0)
    return Graph(
        tuple(sorted(boxes, key=lambda b: (b.layer, b.y))),
        tuple(edges),
        width=2 * MARGIN + len(columns) * BOX_W + max(0, len(columns) - 1) * GAP_X,
        height=2 * MARGIN + tallest * BOX_H + max(0, tallest - 1) * GAP_Y,
        layers=len(columns),
    )


def _unique(nodes: Sequence[Node]) -> dict[str, Node]:
    """The nodes by id, the first of each id kept."""
    known: dict[str, Node] = {}
    for node in nodes:
        known.setdefault(node.id, node)
    return known


def _order(node: Node) -> tuple[int, str]:
    return (-node.priority, node.id)


def _mean_row(node: Node | None, row: Mapping[str, float], layer: Mapping[str, int]) -> float:
    """Where the tasks it waits for stand in their columns, on average: a task sits near them."""
    if node is None:
        return 0.0
    placed = [row[d] for d in node.after if d in row and layer[d] < layer[node.id]]
    return sum(placed) / len(placed) if placed else 0.0


def _box(task_id: str, node: Node | None, ghost_state: str, layer: int, row: int) -> Box:
    label = _cut(task_id, MAX_LABEL)
    x, y = MARGIN + layer * (BOX_W + GAP_X), MARGIN + row * (BOX_H + GAP_Y)
    if node is None:
        return Box(task_id, label, ghost_state, "", task_id, layer, x, y, ghost=True)
    return Box(task_id, label, node.state, _cut(node.note, MAX_NOTE), node.title or task_id, layer, x, y)


def _cut(text: str, most: int) -> str:
    return text if len(text) <= most else text[: most - 1] + "…"


def _kind(dep_state: str, backwards: bool) -> str:
    if backwards:
        return "cycle"
    return "done" if dep_state == "done" else "open"


def _path(source: Box, target: Box) -> str:
    """A curve from the middle of `source`'s right side to the middle of `target`'s left side."""
    x1, y1 = source.x + BOX_W, source.y + BOX_H // 2
    x2, y2 = target.x, target.y + BOX_H // 2
    bend = max(GAP_X // 2, abs(x2 - x1) // 3)
    return f"M{x1},{y1} C{x1 + bend},{y1} {x2 - bend},{y2} {x2},{y2}"
