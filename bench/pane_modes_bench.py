"""Would `--ax-screen-reader` or `claude agents --json` make the pane fallback simpler or more robust?

    .venv/bin/python -m bench.pane_modes_bench [--width 100] [--part all|flat|agents]

(1) The capture scenarios run again with `--ax-screen-reader` (flat text, no borders or animations); the
pane parser's score on them is printed beside its score on the default UI's committed captures.
(2) One real session is driven through running, idle, a permission dialog, an API error and a 429 being
retried; at each `claude agents --json` is asked what it sees, and its cost per call (wall and CPU, one
process per call) is printed beside one `tmux capture-pane` + `pane_state` of the same pane.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

from bench.common import percentile
from tests.fake_anthropic.capture import Stage, cli_version, run_scenario
from tests.fake_anthropic.client import claude_binary, client_env
from tests.fake_anthropic.scenarios import SCENARIOS, _idle_with
from tests.fake_anthropic.script import bash, overloaded, rate_limited, reply
from worker.tmux.pane_state import pane_state

FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "pane-states"
CALLS = 10


def _score(files: list[Path]) -> tuple[int, Counter[str]]:
    wrong: Counter[str] = Counter()
    for path in files:
        expected = path.name.partition("-")[0]
        if pane_state(path.read_text(encoding="utf-8")).value != expected:
            wrong[expected] += 1
    return len(files) - sum(wrong.values()), wrong


def parser_scores(width: int) -> None:
    version = cli_version()
    default = sorted(FIXTURES.glob(f"*-cc{version}-*-w{width}.txt"))
    with tempfile.TemporaryDirectory(prefix="ib-ax-") as out:
        for name, (scenario, _widths) in SCENARIOS.items():
            try:
                run_scenario(scenario, width, Path(out), version, "--ax-screen-reader", verbose=False)
            except Exception as e:  # a scenario whose screen never came in flat mode counts as missing
                print(f"  (--ax-screen-reader: {name} did not reach its screen: {str(e).splitlines()[0]})")
        flat = sorted(Path(out).glob("*.txt"))
        print(f"== the pane parser on Claude Code {version} screens, {width} columns")
        for label, files in (("default UI (committed captures)", default), ("--ax-screen-reader", flat)):
            right, wrong = _score(files)
            misses = ", ".join(f"{state} {count}" for state, count in sorted(wrong.items())) or "none"
            print(f"  {label:<34} {right}/{len(files)} read right; wrong by expected state: {misses}")


def _agents_json(stage: Stage) -> tuple[float, float, str]:
    env = {**client_env(stage.fake.base_url, stage.work / "home"), "PATH": os.environ.get("PATH", "")}
    start = time.perf_counter()
    proc = subprocess.Popen(
        [str(claude_binary()), "agents", "--json"], env=env, cwd=stage.repo, stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None
    out = proc.stdout.read()
    _pid, _status, usage = os.wait4(proc.pid, 0)  # reaped here, so its CPU time is known
    proc.returncode = 0
    cpu = usage.ru_utime + usage.ru_stime
    sessions = json.loads(out or "[]")
    seen = ", ".join(
        f"{s.get('status')}" + (f" ({s['waitingFor']})" if s.get("waitingFor") else "") for s in sessions
    )
    return time.perf_counter() - start, cpu, seen or "(no session)"


def _capture_cost(stage: Stage) -> float:
    start = time.perf_counter()
    pane_state(stage.text())
    return time.perf_counter() - start


def agents_json(stage: Stage) -> None:
    hold = threading.Event()
    stage.fake.script(
        reply("Working on it.", hold=hold),
        reply("I need to rebuild.", bash("rm -rf build && make", "Rebuild")),
        overloaded(),
        *[rate_limited(retry_after=1, retry=True) for _ in range(10)],
    )
    stage.start("--permission-mode default 'go'")
    walls: list[float] = []
    captures: list[float] = []
    print("== what `claude agents --json` reports, beside the pane parser")

    def ask(moment: str) -> None:
        wall, _cpu, seen = _agents_json(stage)
        walls.append(wall)
        captures.append(_capture_cost(stage))
        print(f"  {moment:<28} agents --json: {seen:<34} pane: {pane_state(stage.text()).value}")

    stage.wait("esc to interrupt")
    ask("a turn streaming")
    hold.set()
    stage.wait(_idle_with("Working on it."))
    ask("turn over, no marker")
    stage.type("rebuild")
    stage.wait("Do you want to proceed?")
    ask("permission dialog")
    stage.keys("Escape")
    stage.wait(_idle_with("Interrupted"))
    stage.type("again")
    stage.wait(_idle_with("529"))
    ask("API error 529 ended the turn")
    stage.type("once more")
    stage.wait("attempt 4/10")  # the first retries say only "API error"; then Claude Code names the 429
    ask("429 being retried")
    stage.keys("Escape")
    for _ in range(CALLS):
        walls.append(_agents_json(stage)[0])
        captures.append(_capture_cost(stage))
    cpus = [_agents_json(stage)[1] for _ in range(3)]
    print(
        f"  cost per look: agents --json wall p50 {percentile(walls, 50) * 1000:.0f} ms"
        f" (p99 {percentile(walls, 99) * 1000:.0f} ms), CPU {percentile(cpus, 50) * 1000:.0f} ms;"
        f" capture-pane + pane_state wall p50 {percentile(captures, 50) * 1000:.1f} ms"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--width", type=int, default=100)
    parser.add_argument("--part", choices=("all", "flat", "agents"), default="all")
    args = parser.parse_args()
    if args.part in ("all", "flat"):
        parser_scores(args.width)
    if args.part in ("all", "agents"):
        run_scenario(agents_json, args.width, Path(tempfile.gettempdir()), cli_version(), verbose=False)


if __name__ == "__main__":
    main()
