"""ARCHITECTURE.md stays true: its map lists worker's areas and bot's and bus's rooms in the order the layer
test holds them (tests/unit/test_import_layers.py `LAYERS`, `BOT_LAYERS`, `BUS_LAYERS`), its table has a row
for each area of worker and names bot's, web's and bus's rooms in order in their rows, and its figures are the
code's (`python -m bench.package_figures --write` writes them again)."""

from __future__ import annotations

import re
from pathlib import Path

from bench.package_figures import FIGURES_END, FIGURES_START, current_figures
from tests.unit.test_import_layers import BOT_LAYERS, BUS_LAYERS, LAYERS, WEB_LAYERS

ROOT = Path(__file__).resolve().parents[2]
DOC = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")
SMALL = ("terminal_text", "message_kinds", "errors", "markers", "secret_env")  # one line of the map


def _mapped() -> list[str]:
    """worker's areas as the map draws them, top down; the small pure modules as one line."""
    block = DOC.split("```", 2)[1]
    areas: list[str] = []
    for line in block.splitlines():
        found = re.match(r" worker\.(\w+)(,)?", line)
        if found:
            areas += list(SMALL) if found.group(2) else [found.group(1)]
    return areas


def test_the_map_lists_every_area_in_the_layer_order() -> None:
    assert _mapped() == list(LAYERS)


def test_the_map_lists_every_room_of_bot_in_the_layer_order() -> None:
    block = DOC.split("```", 2)[1]
    rooms = [found.group(1) for line in block.splitlines() if (found := re.match(r" bot\.(\w+)", line))]
    assert rooms == [room for room in BOT_LAYERS if room != "__main__"]


def test_the_bot_row_names_its_rooms_in_the_layer_order() -> None:
    row = re.search(r"^\| `bot` \|(.*)$", DOC, flags=re.MULTILINE)
    assert row is not None
    named = re.findall(r"`(\w+)`", row.group(1))
    assert named == [room for room in BOT_LAYERS if room != "__main__"]


def test_the_map_lists_every_module_of_web_in_the_layer_order() -> None:
    block = DOC.split("```", 2)[1]
    rooms = [found.group(1) for line in block.splitlines() if (found := re.match(r" web\.(\w+)", line))]
    assert rooms == list(WEB_LAYERS)


def test_the_web_row_names_its_modules_in_the_layer_order() -> None:
    row = re.search(r"^\| `web` \|(.*)$", DOC, flags=re.MULTILINE)
    assert row is not None
    named = [name for name in re.findall(r"`(\w+)`", row.group(1)) if name in WEB_LAYERS]
    assert list(dict.fromkeys(named)) == list(WEB_LAYERS)


def test_the_map_lists_every_room_of_bus_in_the_layer_order() -> None:
    block = DOC.split("```", 2)[1]
    rooms = [found.group(1) for line in block.splitlines() if (found := re.match(r" bus\.(\w+)", line))]
    assert rooms == list(BUS_LAYERS)


def test_the_bus_row_names_its_rooms_in_the_layer_order() -> None:
    """bus's row names modules too: its rooms are the names of rooms it gives, in the order first given."""
    row = re.search(r"^\| `bus` \|(.*)$", DOC, flags=re.MULTILINE)
    assert row is not None
    named = [name for name in re.findall(r"`(\w+)`", row.group(1)) if name in BUS_LAYERS]
    assert list(dict.fromkeys(named)) == list(BUS_LAYERS)


def test_the_table_has_a_row_for_every_area() -> None:
    rows = set(re.findall(r"^\| `worker\.(\w+)` \|", DOC, flags=re.MULTILINE))
    areas = {area for area in LAYERS if (ROOT / "worker" / area).is_dir() or area == "runtime"}
    assert sorted(areas - rows - {"runtime"}) == []


def test_the_figures_are_the_codes() -> None:
    written = DOC.split(FIGURES_START, 1)[1].split(FIGURES_END, 1)[0].strip()
    assert written == current_figures().strip(), "run: .venv/bin/python -m bench.package_figures --write"


def test_tmux_runs_only_in_its_area() -> None:
    """The map's word that tmux runs through worker.tmux (`server`, and `in_pane` for the hooks): no other
    module of the three packages starts a `tmux` process."""
    starts = re.compile(r"""[\[(]\s*["']tmux["']\s*,""")
    area = ROOT / "worker" / "tmux"
    outside = [
        str(path.relative_to(ROOT))
        for package in ("bus", "worker", "bot")
        for path in (ROOT / package).rglob("*.py")
        if not path.is_relative_to(area) and starts.search(path.read_text(encoding="utf-8"))
    ]
    assert outside == []
