"""The allow-list of `ib` inside an agent, decided for each role, command and target."""

from __future__ import annotations

import pytest

from worker.boundary.rules import Request, decide

MGR, KID, OTHER = "mgr", "kid", "victim"


def _req(
    command: str,
    target: str | None = None,
    manager: str | None = None,
    *,
    acting_as: str | None = None,
    options: frozenset[str] | set[str] = frozenset(),
    caller_manager: str = "",
) -> Request:
    return Request(command, target, acting_as, frozenset(options), manager, caller_manager)


CASES = [
    # (role, caller, request, allowed, words of the refusal)
    ("worker", KID, _req("notify"), True, ""),
    ("worker", KID, _req("notify", acting_as=OTHER), False, "only for itself"),
    ("worker", KID, _req("ask"), True, ""),
    ("worker", KID, _req("log", acting_as=KID), True, ""),
    ("worker", KID, _req("log", acting_as=OTHER), False, "only for itself"),
    ("worker", KID, _req("task claim"), True, ""),
    ("worker", KID, _req("task done", acting_as=OTHER), False, "for 'victim'"),
    ("worker", KID, _req("task fail"), True, ""),
    ("worker", KID, _req("task show"), True, ""),
    ("worker", KID, _req("list"), True, ""),
    ("worker", KID, _req("info", KID, MGR), True, ""),
    ("worker", KID, _req("info", OTHER, ""), False, "not its child"),
    ("worker", KID, _req("diff", KID, MGR), True, ""),
    ("worker", KID, _req("status", OTHER, ""), False, "not its child"),
    ("worker", KID, _req("send", "user"), True, ""),
    ("worker", KID, _req("send", MGR, "", caller_manager=MGR), True, ""),  # to its own manager
    ("worker", KID, _req("send", OTHER, "", caller_manager=MGR), False, "not its child"),
    ("worker", KID, _req("send", "user", acting_as=OTHER), False, "only for itself"),
    ("manager", MGR, _req("send", "user"), True, ""),  # a top agent: its manager is the person
    ("manager", MGR, _req("diff", MGR, ""), True, ""),
    ("manager", MGR, _req("look", MGR, ""), True, ""),
    ("worker", KID, _req("task add"), False, "not in what a worker agent may do"),
    ("worker", KID, _req("kill", OTHER, ""), False, "not in what a worker agent may do"),
    ("worker", KID, _req("new-agent"), False, "not in what a worker agent may do"),
    ("worker", KID, _req("hook event"), True, ""),
    ("worker", KID, _req("hook stop", acting_as=OTHER), False, "only for itself"),
    ("manager", MGR, _req("kill", KID, MGR), True, ""),
    ("manager", MGR, _req("kill", OTHER, ""), False, "may not kill victim (not its child)"),
    ("manager", MGR, _req("kill", OTHER, "someone"), False, "not its child"),
    ("manager", MGR, _req("kill", MGR, ""), False, "not its child"),  # itself
    ("manager", MGR, _req("kill", "ghost", None), False, "no such agent"),
    ("manager", MGR, _req("kill", "..", None), False, "not an agent id"),
    ("manager", MGR, _req("kill", "../victim", None), False, "not an agent id"),
    ("manager", MGR, _req("kill"), False, "must name which of its children"),
    ("manager", MGR, _req("merge", KID, MGR), True, ""),
    ("manager", MGR, _req("merge", OTHER, ""), False, "not its child"),
    ("manager", MGR, _req("merge", KID, MGR, options={"--into"}), False, "--into"),
    ("manager", MGR, _req("send", KID, MGR), True, ""),
    ("manager", MGR, _req("send", KID, MGR, acting_as=OTHER), False, "as 'victim'"),
    ("manager", MGR, _req("send", OTHER, ""), False, "not its child"),
    ("manager", MGR, _req("look", KID, MGR), True, ""),
    ("manager", MGR, _req("look", OTHER, ""), False, "not its child"),
    ("manager", MGR, _req("new-agent"), True, ""),
    ("manager", MGR, _req("new-agent", acting_as=MGR), True, ""),
    ("manager", MGR, _req("new-agent", acting_as=OTHER), False, "manager 'victim'"),
    ("manager", MGR, _req("new-agent", options={"--no-worktree"}), False, "--no-worktree"),
    ("manager", MGR, _req("new-agent", options={"--on"}), False, "--on"),
    ("manager", MGR, _req("task add"), True, ""),
    ("manager", MGR, _req("task add", options={"--test-cmd"}), False, "only the person sets code"),
    ("manager", MGR, _req("task edit", options={"--test-cmd"}), False, "--test-cmd"),
    ("manager", MGR, _req("task delete"), False, "not in what a manager agent may do"),
    ("manager", MGR, _req("approve", KID, MGR), False, "not in what a manager agent may do"),
    ("manager", MGR, _req("hooks install"), False, "the person's own set-up"),
    ("manager", MGR, _req("status-node"), False, "the person's own set-up"),
    ("manager", MGR, _req("up"), False, "the person's own set-up"),
    ("manager", MGR, _req("down"), False, "the person's own set-up"),
    ("manager", MGR, _req("bus stop"), False, "the person's own set-up"),
    ("manager", MGR, _req("config"), False, "the person's own set-up"),
    ("manager", MGR, _req("worker"), False, "the person's own set-up"),
    ("manager", MGR, _req("bot"), False, "the person's own set-up"),
    ("manager", MGR, _req("nuke", KID, MGR), False, "the person's own set-up"),
    ("manager", MGR, _req("auto start"), False, "not in what a manager agent may do"),
    ("reviewer", MGR, _req("kill", KID, MGR), False, "not in what a reviewer agent may do"),  # unknown role
]


@pytest.mark.parametrize(
    ("role", "caller", "request_", "allowed", "words"),
    CASES,
    ids=[f"{c[0]}-{c[2].command}-{c[2].target or c[2].acting_as}-{sorted(c[2].options)}" for c in CASES],
)
def test_decide(role: str, caller: str, request_: Request, allowed: bool, words: str) -> None:
    verdict = decide(role, caller, request_)
    assert verdict.allowed is allowed
    assert words in verdict.why
    if not allowed:
        assert verdict.why.startswith(f"agent {caller} m") and "\n" not in verdict.why
