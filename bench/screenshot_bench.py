"""Pane screenshots: time and PNG size for an 80×24 and a 200×50 pane full of coloured text.

    .venv/bin/python -m bench.screenshot_bench [--save DIR]

A real tmux server (its own socket) runs a program that fills the pane with Claude Code-like lines in
16-colour, 256-colour and true colour, bold, reverse, CJK and emoji. Measured per pane size:
  - `tmux capture-pane -p` (the plain text /look sends): the baseline, what a look costs today;
  - Tmux.capture_screen (`capture-pane -e` with the size, one tmux call);
  - render_png (rich reads the escapes, Pillow paints the cells), and the PNG's size;
  - the route we did not take: rich's export_svg of the same screen (an SVG still to be turned into a PNG
    by cairosvg, which needs libcairo), its time and size.
"""

from __future__ import annotations

import argparse
import io
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path

from rich.console import Console
from rich.text import Text

from bench.common import summary_ms
from worker.tmux.client import Tmux
from worker.tmux.screenshot import render_png

RUNS = 30
PAINTER = r"""
import sys, itertools
w, h = int(sys.argv[1]), int(sys.argv[2])
rows = [
    "\x1b[1;38;5;208m●\x1b[0m I'll read the parser first, then split it into \x1b[1mtwo modules\x1b[0m.",
    "  \x1b[2m⎿\x1b[0m  Read \x1b[1mworker/pane_state.py\x1b[0m (177 lines) 漢字 ✓ 🤖",
    "\x1b[32m+    def pane_state(text: str) -> str:\x1b[0m",
    "\x1b[31m-    def parse(text):\x1b[0m \x1b[48;2;40;40;60m true colour background \x1b[0m",
    "\x1b[7m reverse \x1b[0m \x1b[4munderlined\x1b[0m \x1b[38;2;120;200;255mtrue colour\x1b[0m",
    "  \x1b[94mbright blue\x1b[0m \x1b[1;32m✓ 42 passed\x1b[0m in 1.3s",
]
out = []
for i, row in zip(range(h - 1), itertools.cycle(rows)):
    out.append(row + " " + "·" * max(0, w - 80))
sys.stdout.write("\n".join(out))
sys.stdout.flush()
import time; time.sleep(3600)
"""


def timed(call: Callable[[], object], runs: int = RUNS) -> list[float]:
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        call()
        samples.append(time.perf_counter() - start)
    return samples


def svg_of(screen: str, width: int) -> str:
    console = Console(width=width, record=True, file=io.StringIO(), color_system="truecolor")
    console.print(Text.from_ansi(screen), end="")
    return console.export_svg(title="agent")


def bench_size(tmux: Tmux, width: int, height: int, save: Path | None) -> None:
    name = f"shot-{width}x{height}"
    painter = Path(tempfile.mkdtemp()) / "painter.py"
    painter.write_text(PAINTER)
    tmux.new_session(
        name, "/tmp", f"{sys.executable} {painter} {width} {height}", {}, width=width, height=height
    )
    try:
        for _ in range(100):
            if tmux.capture(name).count("\n") >= height - 1:
                break
            time.sleep(0.05)
        _w, _h, screen = tmux.capture_screen(name)
        plain = timed(lambda: tmux.capture(name))
        capture = timed(lambda: tmux.capture_screen(name))
        render = timed(lambda: render_png(screen, width, height))
        png = render_png(screen, width, height)
        svg_times = timed(lambda: svg_of(screen, width), runs=10)
        svg = svg_of(screen, width)
        whole = [c + r for c, r in zip(capture, render, strict=True)]
        print(f"== {width}×{height} pane")
        print(f"  baseline: capture-pane -p (text, what /look sends)  {summary_ms(plain)}")
        print(f"  capture-pane -e + size                              {summary_ms(capture)}")
        print(f"  render_png (rich + Pillow)                          {summary_ms(render)}")
        total = statistics.median(whole) * 1000
        print(f"  screenshot total (capture + render)                 p50={total:.1f} ms")
        print(f"  PNG size: {len(png):,} bytes ({len(png) * 4 // 3:,} as base64 in the bus reply)")
        print(
            f"  not taken: rich export_svg (before any SVG→PNG step)  {summary_ms(svg_times)}; "
            f"SVG {len(svg):,} bytes"
        )
        if save is not None:
            (save / f"{name}.png").write_bytes(png)
    finally:
        tmux.kill_session(name)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--save", type=Path, help="write the PNGs into this folder")
    args = parser.parse_args()
    tmux = Tmux(f"ibbench-{uuid.uuid4().hex[:8]}", config_file="/dev/null")
    try:
        for width, height in ((80, 24), (200, 50)):
            bench_size(tmux, width, height, args.save)
    finally:
        tmux.kill_server()


if __name__ == "__main__":
    main()
