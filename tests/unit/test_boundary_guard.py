"""The worker's own check of commands an agent sends over the bus: the same allow-list as the CLI's."""

from __future__ import annotations

import pytest

from bus.commands import worker_commands as cmd
from worker.boundary.guard import Refused, check_command

MANAGERS = {"kid": "mgr", "victim": "", "mgr": ""}


def _manager_of(agent_id: str) -> str | None:
    return MANAGERS.get(agent_id)


CASES = [
    # (command, sender, role, refusal or "" when allowed)
    (cmd.Kill(agent="kid"), "mgr", "manager", ""),
    (cmd.Kill(agent="victim", force=True), "mgr", "manager", "agent mgr may not kill victim (not its child)"),
    (cmd.Kill(agent="victim"), "kid", "worker", "agent kid may not run `ib kill`"),
    (cmd.Merge(agent="victim"), "mgr", "manager", "not its child"),
    (cmd.QueueMerge(agent="kid"), "mgr", "manager", ""),
    (cmd.Merge(agent="kid", into="main"), "mgr", "manager", "--into"),
    (cmd.Send(agent="kid", text="hi"), "mgr", "manager", ""),
    (cmd.Send(agent="kid", text="hi", sender="victim"), "mgr", "manager", "as 'victim'"),
    (cmd.TakeScreenshot(agent="victim"), "mgr", "manager", "not its child"),
    (cmd.Send(agent="mgr", text="done"), "kid", "worker", ""),  # a child to its own manager
    (cmd.Send(agent="victim", text="hi"), "kid", "worker", "not its child"),
    (cmd.PressKeys(agent="kid", keys=("Escape",)), "mgr", "manager", ""),
    (cmd.NewAgent(goal="x"), "mgr", "manager", ""),
    (cmd.NewAgent(goal="x", no_worktree=True), "mgr", "manager", "--no-worktree"),
    (cmd.NewAgent(goal="x", manager="victim"), "mgr", "manager", "manager 'victim'"),
    (cmd.NewAgent(goal="x"), "kid", "worker", "`ib new-agent`"),
    (cmd.Approve(agent="kid"), "mgr", "manager", "approve (over the bus)"),
    (cmd.Nuke(), "mgr", "manager", "nuke"),
    (cmd.Kill(agent="ghost"), "mgr", "manager", "no such agent"),
    (cmd.Kill(agent="victim", force=True), "ib@w1", None, ""),  # not an agent: the worker cannot tell more
]


@pytest.mark.parametrize(
    ("command", "sender", "role", "refusal"),
    CASES,
    ids=[f"{c[0].op}-{c[1]}-{i}" for i, c in enumerate(CASES)],
)
def test_check_command(command: cmd.Command, sender: str, role: str | None, refusal: str) -> None:
    if not refusal:
        check_command(command, sender, role, _manager_of)
        return
    with pytest.raises(Refused) as refused:
        check_command(command, sender, role, _manager_of)
    assert refusal in str(refused.value) and "\n" not in str(refused.value)
