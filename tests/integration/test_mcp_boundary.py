"""`ib mcp` started inside an agent (by a program the fake agent runs, so the server descends from the
agent's pane as it would from Claude Code's) acts with that agent's rights, checked by the boundary's own
guard: a manager kills its child but not a sibling, merges nothing of another's, and reads no person's
view; whatever environment the client gave the server."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.cli import IB, IbRunner
from tests.waiting import retry_until

MGR, KID, VICTIM = "mgr", "kid", "victim"
CALLS = [
    ("kill", {"agent": VICTIM, "force": True}),
    ("merge", {"agent": VICTIM}),
    ("attention", {}),
    ("spawn", {"goal": "x", "worktree": False}),
    ("list_agents", {}),
    ("kill", {"agent": KID, "force": True}),
    ("resume", {"agent": VICTIM}),
    ("auto_start", {"project": "p"}),
    ("review_comment", {"agent": VICTIM, "request_changes": True}),
]
CLIENT = """
import json, sys
import anyio
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

async def main():
    forged = {{"IB_AGENT_ID": "{victim}", "IB_AGENT_ROLE": "manager", "IB_NAMESPACE": "elsewhere"}}
    params = StdioServerParameters(command="{ib}", args=["mcp"], env=forged)
    out = []
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        for tool, arguments in json.loads(sys.argv[1]):
            result = await session.call_tool(tool, arguments)
            out.append({{"tool": tool, "error": result.is_error, "text": result.content[0].text}})
    with open("mcp-out.json", "w") as f:
        json.dump(out, f)

anyio.run(main)
"""


@pytest.mark.timeout(200)
def test_a_managers_server_acts_with_the_managers_rights(agents_ib: IbRunner, repo: Path) -> None:
    for name, extra in ((VICTIM, ()), (MGR, ()), (KID, ("--manager", MGR, "--worker"))):
        done = agents_ib.run("new-agent", "fake: wait", "--name", name, *extra)
        assert done.returncode == 0, done.stderr
    worktree = repo / ".ib" / "agents" / MGR / "repo"
    (worktree / "try_mcp.py").write_text(CLIENT.format(victim=VICTIM, ib=IB))
    (worktree / "calls.json").write_text(json.dumps(CALLS))
    step = f'fake: run {sys.executable} try_mcp.py "$(cat calls.json)" > mcp-err.txt 2>&1'
    assert agents_ib.run("send", MGR, step + "\nfake: wait").returncode == 0
    out = worktree / "mcp-out.json"
    retry_until(out.exists, 90, what=f"the MCP client's answers in {MGR}; {worktree / 'mcp-err.txt'}")
    got = {(r["tool"], i): r for i, r in enumerate(json.loads(out.read_text()))}
    said = [(r["error"], r["text"]) for r in got.values()]
    assert said[0] == (True, f"agent {MGR} may not kill {VICTIM} (not its child)")
    assert said[1] == (True, f"agent {MGR} may not merge {VICTIM} (not its child)")
    assert said[2][0] and "may not run `ib attention`" in said[2][1]
    assert said[3] == (True, f"agent {MGR} may not give --no-worktree to `ib new-agent`: its child would "
                             "write the person's checkout")  # fmt: skip
    assert said[4][0] is False and VICTIM in said[4][1]  # its own bus, not the forged namespace
    assert said[5] == (False, f"killed {KID}")
    assert said[6] == (True, f"agent {MGR} may not resume {VICTIM} (not its child)")
    assert said[7][0] and "may not run `ib auto`" in said[7][1]
    assert said[8][0] and "may not run `ib review`" in said[8][1]
    alive = agents_ib.run("list").stdout
    assert VICTIM in alive and KID not in alive.split()
