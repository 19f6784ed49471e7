"""Inside worker/, bot/, bus/ and web/, imports only go down: each area (a subpackage, or a module at the top
of the package) imports only the areas listed below it in its package's order (`LAYERS` for worker,
`BOT_LAYERS` for bot, `BUS_LAYERS` for bus, `WEB_LAYERS` for web). An arrow back up is allowed only by name
in `ALLOWED_UP`, with why; a new one fails here. Lazy and TYPE_CHECKING imports count like the others.

`python -c "from tests.unit.test_import_layers import print_arrows; print_arrows()"` prints every arrow
between the areas, with the imports that draw it (`print_arrows("bot")` for bot's, `print_arrows("bus")` for
bus's).
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import pytest

from tests.sources import imports

ROOT = Path(__file__).resolve().parents[2]

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

BOT_LAYERS = (
    "__main__",
    "app",
    "handlers",
    "review",
    "bot_runtime",
    "feeds",
    "attention",
    "config",
    "delivery",
    "topics",
    "render",
    "errors",
)
"""bot's rooms from the top down: `app` wires them all (`__main__` only calls it), the handlers act on
what people do, `bot_runtime` is what the handlers share, and `render` (pure) imports nothing of bot's but
`errors`."""

WEB_LAYERS = (
    "invite",
    "app",
    "routes",
    "stream",
    "actions",
    "options",
    "guard",
    "people_file",
    "page_token",
    "people",
    "render",
    "queues",
    "task_graph",
    "at_risk",
    "board",
    "errors",
)
"""web's modules from the top down: `invite` (the owner's --invite, --revoke, --people) over `app`, which
wires uvicorn to the routes, the event stream and the clicks sit under them, and `board` (the bus read into
what the page shows) imports nothing of web's but `errors`."""

BUS_LAYERS = (
    "commands",
    "readers",
    "inbox",
    "tasks",
    "stores",
    "events",
    "connection",
    "settings",
    "costs",
    "wire",
    "poll",
    "errors",
)
"""bus's rooms from the top down: the worker commands may import every other room, the readers of the events
stream read the inbox's and the tasks' stores, and `wire` (the light client, the key names) imports nothing
of bus's but `poll` and `errors`."""

ORDERS = {"worker": LAYERS, "bot": BOT_LAYERS, "bus": BUS_LAYERS, "web": WEB_LAYERS}

ALLOWED_UP = {
    ("service", "frontends"): "the worker starts its repository's status node (StatusNodeStarter), and the "
    "dashboard in frontends/ reads the stack's state from service/",
}
"""The arrows of worker that run back up on purpose, each with why (the import carries the same comment).
bot, bus and web have none."""


def _area(module: str, package: str) -> str | None:
    """The area a dotted module of `package` belongs to, None for the package itself or outside it."""
    parts = module.split(".")
    if parts[0] != package or len(parts) < 2:
        return None
    return parts[1]


def _arrows(package: str = "worker") -> dict[tuple[str, str], list[str]]:
    """Every (importer's area, imported area) pair inside the package, with `file:line module` for each."""
    arrows: dict[tuple[str, str], list[str]] = defaultdict(list)
    for path in sorted((ROOT / package).rglob("*.py")):
        relative = path.relative_to(ROOT)
        source = _area(".".join(relative.with_suffix("").parts), package)
        if source is None or source == "__init__":
            continue
        for node in imports(path):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif node.module and node.level == 0:
                is_package = node.module == package
                targets = [f"{package}.{a.name}" for a in node.names] if is_package else [node.module]
            for target in targets:
                area = _area(target, package)
                if area is not None and area != source:
                    arrows[(source, area)].append(f"{relative}:{node.lineno} {target}")
    return arrows


def _runs_up(pair: tuple[str, str], package: str = "worker") -> bool:
    importer, imported = pair
    order = ORDERS[package]
    return order.index(imported) < order.index(importer)


def print_arrows(package: str = "worker") -> None:
    for pair, where in sorted(_arrows(package).items()):
        mark = "  UP" if _runs_up(pair, package) else ""
        print(f"{pair[0]} -> {pair[1]}{mark}")
        for line in where:
            print(f"    {line}")


@pytest.mark.parametrize("package", sorted(ORDERS))
def test_every_area_is_placed_in_a_layer(package: str) -> None:
    folder = ROOT / package
    found = {p.stem for p in folder.glob("*.py") if p.stem != "__init__"}
    found |= {p.name for p in folder.iterdir() if (p / "__init__.py").exists()}
    order = ORDERS[package]
    assert sorted(found - set(order)) == [], "add the new area to the order, below every area that imports it"
    assert sorted(set(order) - found) == [], "an area in the order is gone: take it out"


@pytest.mark.parametrize("package", sorted(ORDERS))
def test_imports_inside_a_package_only_go_down(package: str) -> None:
    allowed = ALLOWED_UP if package == "worker" else {}
    arrows = _arrows(package)
    up = {pair: where for pair, where in arrows.items() if _runs_up(pair, package) and pair not in allowed}
    assert up == {}, "move the imported code down, or allow the arrow by name in ALLOWED_UP with why"


@pytest.mark.parametrize("pair", sorted(ALLOWED_UP), ids=lambda pair: f"{pair[0]}->{pair[1]}")
def test_an_allowed_arrow_up_still_exists(pair: tuple[str, str]) -> None:
    assert pair in _arrows(), "this arrow is gone: take it out of ALLOWED_UP"
    assert _runs_up(pair), "this arrow runs down now: take it out of ALLOWED_UP"


def test_at_most_three_arrows_run_up() -> None:
    assert len(ALLOWED_UP) <= 3
