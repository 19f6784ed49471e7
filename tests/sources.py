"""The repository's Python files as the structure tests read them, each parsed once per test process. The
import tests (cycles, layers, declared dependencies) and the scan of the command callers walk the same
several hundred files; each test parsing them again cost a few seconds of CPU apiece, a minute in all on a
loaded 2-core machine. The sources do not change during a run, and no reader changes a tree."""

from __future__ import annotations

import ast
import functools
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def python_files(*folders: str) -> list[Path]:
    """The .py files under the repository's `folders`, sorted."""
    return sorted(path for folder in folders for path in (ROOT / folder).rglob("*.py"))


@functools.cache
def nodes(path: Path) -> tuple[ast.AST, ...]:
    """Every node of the file's tree, in `ast.walk`'s order."""
    return tuple(ast.walk(ast.parse(path.read_text(encoding="utf-8"))))


@functools.cache
def imports(path: Path) -> tuple[ast.Import | ast.ImportFrom, ...]:
    """The file's import statements at any depth (lazy ones inside functions included)."""
    return tuple(node for node in nodes(path) if isinstance(node, ast.Import | ast.ImportFrom))
