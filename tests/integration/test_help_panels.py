"""`ib --help` groups its commands in panels: the five a newcomer needs first, then by what they act on
(agents, tasks, bus, stack, Telegram), the plumbing last (issue 25 point 7, issue 24): every command sits
in a named panel and none in typer's catch-all "Commands"."""

from __future__ import annotations

import re

from tests.cli import IbRunner

PANELS = [
    "Options",
    "Start here",
    "Agents",
    "Dialogs, questions and messages",
    "Tasks, plans and auto mode",
    "Bus and events",
    "Stack",
    "Telegram",
    "Plumbing (agents, hooks and scripts call these)",
]


def _panels(text: str) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    current = ""
    for line in text.splitlines():
        title = re.match(r"╭─ (.+?) ─", line)
        if title:
            current = title[1]
            found[current] = []
        elif current and (name := re.match(r"│ ([a-z][a-z-]*)\s", line)):
            found[current].append(name[1])
    return found


def test_help_is_grouped_with_the_plumbing_last(ib: IbRunner) -> None:
    done = ib.run("--help", env={"COLUMNS": "120"})
    assert done.returncode == 0, done.stderr
    panels = _panels(done.stdout)
    assert list(panels) == PANELS
    assert panels["Start here"] == ["up", "new-agent", "list", "look", "watch"]
    assert {"notify", "listen", "ack", "events", "bus"} == set(panels["Bus and events"])
    assert {"down", "ps", "worker", "hooks", "web"} <= set(panels["Stack"])
    assert panels["Telegram"] == ["bot"]
    assert {"hook", "spool", "parse-state", "status-node"} <= set(panels[PANELS[-1]])
    assert {"info", "send", "diff", "review", "merge", "merge-queue", "kill", "cost", "budget"} <= set(
        panels["Agents"]
    )
    commands = [c for title, names in panels.items() if title != "Options" for c in names]
    assert len(commands) == len(set(commands)) == 56
