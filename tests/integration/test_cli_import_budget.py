"""What an everyday `ib` command loads when it runs: what it needs (the settings, redis-py, the store it
reads), never the areas it does not use (tmux, git, the command models, the dashboard, rich
where it prints plain lines). Each probe runs the real entry point in a fresh interpreter against the
test's Redis; the other half of the budget, what building each command loads, is in
tests/unit/test_hot_imports.py."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.cli import IbRunner

PROBE = """
import sys
sys.argv = ["ib", *{argv!r}]
from worker.cli.entry import main
try:
    main()
except SystemExit:
    pass
print(" ".join(sorted(sys.modules)), file=sys.stderr)
"""
NOT_NEEDED = frozenset(
    {"libtmux", "PIL", "worker.tmux.client", "worker.git.repo", "worker.auto.loop", "worker.merges.land"}
    | {"worker.frontends.dashboard", "worker.review.review", "worker.service.process"}
)
RUNS = {  # the command, and what it must not load beyond NOT_NEEDED
    "list": (("list",), {"bus.commands.worker_commands"}),
    "info": (("info", "ghost"), {"bus.commands.worker_commands", "rich"}),
    "task-list": (("task", "list"), {"bus.commands.worker_commands", "rich"}),
    "task-show": (("task", "show", "ghost-task"), {"bus.commands.worker_commands", "rich"}),
    "cost": (("cost",), {"bus.commands.worker_commands", "rich"}),
    "events-dead": (("events", "--dead"), {"bus.commands.worker_commands", "rich"}),
    "status": (("status", "ghost"), set()),  # the agent's owner runs it: the command model is its message
}


@pytest.mark.parametrize(("argv", "unused"), RUNS.values(), ids=RUNS.keys())
def test_an_everyday_command_loads_only_what_it_uses(
    ib: IbRunner, argv: tuple[str, ...], unused: set[str]
) -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROBE.format(argv=list(argv))],
        capture_output=True,
        text=True,
        env=ib.environ({"IB_WARM": "0"}),  # what the command loads in its own process, with no server
        cwd=ib.cwd,
        timeout=60,
        check=False,
    )
    loaded = set(done.stderr.splitlines()[-1].split())
    assert "bus.settings.settings" in loaded  # the probe ran the command, up to its answer or its refusal
    top = {name.partition(".")[0] for name in loaded}
    assert (loaded | top) & (NOT_NEEDED | unused) == set()
