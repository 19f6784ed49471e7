"""The tmux layer on libtmux against the hand-rolled client it replaced, side by side in one run.

    .venv/bin/python -m bench.tmux_bench [--baseline REV] [--runs N]

The baseline is worker/tmux/client.py as it was at REV (default 622eb59, the last commit before the
port), loaded from git into this process; each Tmux gets a private tmux server on its own socket. The
calls of each operation alternate between the two, so a busy machine slows both alike. Measured: a
capture of a full 200×50 screen (what the pane watcher does for a pane that printed), panes() with 10
sessions (once per watcher tick), has_session, a typed and a pasted send_text (no Enter, so no delay),
one named key, and new_session + kill_session, with and without remain_on_exit (libtmux's new_session,
and the raw call that sets remain-on-exit in the same call).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
import types
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.common import percentile, summary_ms
from worker.tmux.client import Tmux

BASELINE = "622eb59"
SCREEN = "seq 1 1000 | sed 's/$/ lorem ipsum dolor sit amet, consectetur/'; exec cat >/dev/null"


def baseline_class(rev: str) -> Any:
    """`Tmux` from worker/tmux/client.py at `rev`, as a module of its own."""
    source = subprocess.run(
        ["git", "show", f"{rev}:worker/tmux/client.py"], capture_output=True, text=True, check=True
    ).stdout
    module = types.ModuleType("baseline_tmux_client")
    exec(compile(source, f"{rev}:worker/tmux/client.py", "exec"), module.__dict__)
    return module.Tmux


def alternate(runs: int, old: Callable[[], object], new: Callable[[], object]) -> tuple[list[float], ...]:
    samples: tuple[list[float], list[float]] = ([], [])
    for _ in range(runs):
        for call, into in ((old, samples[0]), (new, samples[1])):
            start = time.perf_counter()
            call()
            into.append(time.perf_counter() - start)
    return samples


def prepare(tmux: Any, folder: str) -> None:
    tmux.new_session("screen", folder, SCREEN, {}, width=200, height=50)
    for n in range(9):
        tmux.new_session(f"idle-{n}", folder, "exec sleep 3600", {})
    for _ in range(100):
        if tmux.capture("screen").count("\n") >= 49:
            return
        time.sleep(0.05)


def operations(tmux: Any, folder: str) -> dict[str, Callable[[], object]]:
    made = iter(range(1_000_000))

    def spawn(remain: bool) -> None:
        name = f"s-{next(made)}"
        tmux.new_session(name, folder, "exec sleep 3600", {}, remain_on_exit=remain)
        tmux.kill_session(name)

    return {
        "capture (200×50 screen)": lambda: tmux.capture("screen"),
        "panes() (10 sessions)": tmux.panes,
        "has_session": lambda: tmux.has_session("screen"),
        "send_text typed, no Enter": lambda: tmux.send_text("screen", "hello world", enter=False),
        "send_text pasted, no Enter": lambda: tmux.send_text("screen", "one\ntwo\nthree", enter=False),
        "send_keys one key": lambda: tmux.send_keys("screen", "BSpace"),
        "new_session + kill_session": lambda: spawn(remain=False),
        "… with remain_on_exit": lambda: spawn(remain=True),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--baseline", default=BASELINE, help="the git revision of the old client")
    parser.add_argument("--runs", type=int, default=200)
    args = parser.parse_args()
    folder = tempfile.mkdtemp(prefix="tmux-bench-")
    old = baseline_class(args.baseline)(f"ibbench-old-{uuid.uuid4().hex[:8]}", config_file="/dev/null")
    new = Tmux(f"ibbench-new-{uuid.uuid4().hex[:8]}", config_file="/dev/null")
    try:
        for tmux in (old, new):
            prepare(tmux, folder)
        print(f"tmux layer, {args.runs} calls each, alternating; baseline {args.baseline} (hand-rolled)")
        for (what, old_call), new_call in zip(
            operations(old, folder).items(), operations(new, folder).values(), strict=True
        ):
            before, after = alternate(args.runs, old_call, new_call)
            ratio = percentile(after, 50) / percentile(before, 50)
            print(f"== {what}: libtmux / baseline p50 = {ratio:.2f}")
            print(f"  baseline  {summary_ms(before)}")
            print(f"  libtmux   {summary_ms(after)}")
    finally:
        old.kill_server()
        new.kill_server()
    Path(folder).rmdir()
    sys.stdout.flush()


if __name__ == "__main__":
    main()
