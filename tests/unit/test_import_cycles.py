"""The packages import each other in one direction only: no module reaches itself through its imports.

Every import counts, lazy ones inside functions included, and a `from pkg import name` counts as an
import of `pkg.name` when that is a module. bus imports neither worker, bot nor web; bot never imports worker;
web imports neither worker nor bot (it reaches agents through the bus, like the bot), and of worker only
`ib web`'s command imports it.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

from tests.sources import imports

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("bus", "worker", "bot", "web")
WEB_COMMAND = "worker.cli.web_commands"  # `ib web`: the one module of worker that imports web (when it runs)


def _modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            parts = path.relative_to(ROOT).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            found[name] = path
    return found


def _imports(path: Path, modules: dict[str, Path]) -> set[str]:
    targets: set[str] = set()
    for node in imports(path):
        if isinstance(node, ast.Import):
            targets.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            targets.add(node.module)
            targets.update(f"{node.module}.{alias.name}" for alias in node.names)
    return {t for t in targets if t in modules}


@functools.cache
def _graph() -> dict[str, set[str]]:
    modules = _modules()
    return {name: _imports(path, modules) - {name} for name, path in modules.items()}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative enough for ~200)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_import_cycles() -> None:
    graph = _graph()
    # a package's __init__ is imported on the way to each of its modules: only its own imports count
    assert _cycles(graph) == []


def test_bus_imports_neither_worker_nor_bot() -> None:
    graph = _graph()
    above = ("worker", "bot", "web")
    offenders = {m: sorted(t for t in ts if t.split(".")[0] in above) for m, ts in graph.items()}
    assert {m: ts for m, ts in offenders.items() if m.startswith("bus") and ts} == {}


def test_bot_never_imports_worker() -> None:
    graph = _graph()
    offenders = {m: sorted(t for t in ts if t.startswith("worker")) for m, ts in graph.items()}
    assert {m: ts for m, ts in offenders.items() if m.startswith("bot") and ts} == {}


def test_web_imports_neither_worker_nor_bot() -> None:
    graph = _graph()
    offenders = {m: sorted(t for t in ts if t.split(".")[0] in ("worker", "bot")) for m, ts in graph.items()}
    assert {m: ts for m, ts in offenders.items() if m.startswith("web") and ts} == {}


def test_only_the_web_command_imports_web() -> None:
    graph = _graph()
    importers = sorted(
        m for m, ts in graph.items() if not m.startswith("web") and any(t.startswith("web") for t in ts)
    )
    assert importers == [WEB_COMMAND]
