"""Inside worker/, imports only go down: each area (a subpackage, or a module at the top of the package)
imports only the areas listed below it in `LAYERS`. An arrow back up is allowed only by name in
`ALLOWED_UP`, with why; a new one fails here. Lazy and TYPE_CHECKING imports count like the others.

`python -c "from tests.unit.test_import_layers import print_arrows; print_arrows()"` prints every arrow
between the areas, with the imports that draw it.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
WORKER = ROOT / "worker"

LAYERS = (
    "mcp",
    "cli",
    "frontends",
    "service",
    "hooks",
    "auto",
    "boundary",
    "tasks",
    "merges",
    "conflicts",
    "review",
    "fake",
    "agents",
    "budgets",
    "runtime",
    "programs",
    "permissions",
    "git",
    "tmux",
    "terminal_text",
    "message_kinds",
    "errors",
    "markers",
    "secret_env",
)
"""worker's areas from the top down: `mcp` (the MCP server, a front end over the CLI's operations) may
import every other one, `secret_env` none."""

ALLOWED_UP = {
    ("service", "frontends"): "the worker starts its repository's status node (StatusNodeStarter), and the "
    "dashboard in frontends/ reads the stack's state from service/",
}
"""The arrows that run back up on purpose, each with why (the import carries the same comment)."""


def _area(module: str) -> str | None:
    """The area a dotted module of worker belongs to, None for the package itself or outside worker."""
    parts = module.split(".")
    if parts[0] != "worker" or len(parts) < 2:
        return None
    return parts[1]


def _arrows() -> dict[tuple[str, str], list[str]]:
    """Every (importer's area, imported area) pair inside worker/, with `file:line module` for each import."""
    arrows: dict[tuple[str, str], list[str]] = defaultdict(list)
    for path in sorted(WORKER.rglob("*.py")):
        relative = path.relative_to(ROOT)
        source = _area(".".join(relative.with_suffix("").parts))
        if source is None or source == "__init__":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Import | ast.ImportFrom):
                continue
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif node.module and node.level == 0:
                is_package = node.module == "worker"
                targets = [f"worker.{a.name}" for a in node.names] if is_package else [node.module]
            for target in targets:
                area = _area(target)
                if area is not None and area != source:
                    arrows[(source, area)].append(f"{relative}:{node.lineno} {target}")
    return arrows


def _runs_up(pair: tuple[str, str]) -> bool:
    importer, imported = pair
    return LAYERS.index(imported) < LAYERS.index(importer)


def print_arrows() -> None:
    for pair, where in sorted(_arrows().items()):
        mark = "  UP" if _runs_up(pair) else ""
        print(f"{pair[0]} -> {pair[1]}{mark}")
        for line in where:
            print(f"    {line}")


def test_every_area_is_placed_in_a_layer() -> None:
    found = {p.stem for p in WORKER.glob("*.py") if p.stem != "__init__"}
    found |= {p.name for p in WORKER.iterdir() if (p / "__init__.py").exists()}
    assert sorted(found - set(LAYERS)) == [], "add the new area to LAYERS, below every area that imports it"
    assert sorted(set(LAYERS) - found) == [], "an area in LAYERS is gone: take it out"


def test_imports_inside_worker_only_go_down() -> None:
    up = {pair: where for pair, where in _arrows().items() if _runs_up(pair) and pair not in ALLOWED_UP}
    assert up == {}, "move the imported code down, or allow the arrow by name in ALLOWED_UP with why"


@pytest.mark.parametrize("pair", sorted(ALLOWED_UP), ids=lambda pair: f"{pair[0]}->{pair[1]}")
def test_an_allowed_arrow_up_still_exists(pair: tuple[str, str]) -> None:
    assert pair in _arrows(), "this arrow is gone: take it out of ALLOWED_UP"
    assert _runs_up(pair), "this arrow runs down now: take it out of ALLOWED_UP"


def test_at_most_three_arrows_run_up() -> None:
    assert len(ALLOWED_UP) <= 3
