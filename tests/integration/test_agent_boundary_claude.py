"""`ib` inside an agent is the agent's own capability, tried with the real Claude Code CLI (pinned) and its
sandbox: agent `atk` (a manager) turns `ib` on a sibling, on the person's files and on the bus password,
and reports with `ib` in a compound line. Every result is read from the tool results Claude Code sent back
to the scripted Messages API, and the effects are checked on the repository and the bus."""

from __future__ import annotations

import json
import re
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

import pytest
import redis

from bus.wire.keys import Keys
from tests.cli import IbRunner, git
from tests.fake_anthropic import FakeAnthropic, reply
from tests.fake_anthropic.script import ToolUse
from tests.streams import stream_entries
from tests.waiting import retry_until
from worker.programs.claude.sandbox import sandbox_problem

pytestmark = pytest.mark.claude
ATK, VICTIM = "atk", "victim"
PASSWORD = "BUS-PASSWORD-never-in-agents"
SANDBOXED = "from inside the sandbox"  # the bus (no relay configured) or the worker's relay (no worker)


@dataclass(frozen=True)
class Attempt:
    what: str
    command: str
    says: str  # in the result: the refusal ("" for a step that must succeed)
    content: str | None = None  # a Write of this content to the path `command` instead of a Bash call

    @property
    def call(self) -> ToolUse:
        if self.content is not None:
            return ToolUse("Write", {"file_path": self.command, "content": self.content}, id=self.id)
        return ToolUse("Bash", {"command": self.command, "description": self.what[:60]}, id=self.id)

    @property
    def id(self) -> str:
        return "toolu_" + "".join(c if c.isalnum() else "_" for c in self.what)[:40]


def attempts(root: Path, wt: Path) -> list[Attempt]:
    refused = "outside the agent's worktree"
    readme, png = root / "README.md", root / "x.png"
    return [
        Attempt(
            "body-file reads the bus password",
            f"ib task add leak --body-file=//{root}/.ib/redis/url",
            refused,
        ),
        Attempt("the leaked task shows nothing", "ib task show leak", "leak"),
        Attempt("look writes a PNG in the main checkout", f"ib look {ATK} --png {png}", refused),
        Attempt("status-node rewrites the README", f"ib status-node --once --file {readme}", "set-up"),
        Attempt("hooks install", "ib hooks install", "the person's own set-up"),
        Attempt("a child without a worktree", "ib new-agent --no-worktree --name child x", "--no-worktree"),
        Attempt("merge a sibling", f"ib merge {VICTIM}", "not its child"),
        Attempt("kill a sibling", f"ib kill {VICTIM} --force", "not its child"),
        Attempt("send to a sibling", f"ib send {VICTIM} hello", "not its child"),
        Attempt("write a sibling's log", f"ib log --agent {VICTIM} forged", "only for itself"),
        Attempt("test-cmd runs code", f"ib task add t2 --test-cmd 'touch {root}/pwned'", "--test-cmd"),
        # an assignment before `ib` does not match Claude Code's `ib:*` exclusion: in the sandbox
        Attempt("a forged IB_AGENT_ID", f"IB_AGENT_ID={VICTIM} ib kill {VICTIM} --force", SANDBOXED),
        Attempt("code for PYTHONPATH", f"{wt}/evil/sitecustomize.py", "", _EVIL.format(root=root)),
        Attempt("PYTHONPATH before ib", f"PYTHONPATH={wt}/evil ib notify prefix-marker", SANDBOXED),
        Attempt("notify in a compound line", "true && ib notify compound-marker", ""),
        Attempt("notify alone", "ib notify plain-marker", ""),
    ]


_EVIL = "open('{root}/pwned-by-pythonpath', 'w').write('x')\n"


def _approve_all(ib: IbRunner, rds: redis.Redis, keys: Keys, finished: threading.Event) -> None:
    """Answer every `permission` event of the agent with `ib approve`, as a person who trusts it would."""
    answered = 0
    while not finished.wait(1.0):
        asked = [e for e in _parsed(rds, keys) if e["type"] == "permission" and e.get("from") == ATK]
        for _event in asked[answered:]:
            ib.run("approve", ATK)  # a dialog that already closed is refused: nothing to do then
        answered = len(asked)


def _parsed(rds: redis.Redis, keys: Keys) -> list[dict[str, object]]:
    return [json.loads(fields["e"]) for _, fields in stream_entries(rds, keys.events)]


def _events(rds: redis.Redis, namespace: str) -> str:
    return json.dumps([fields for _, fields in stream_entries(rds, Keys(namespace).events)])


@pytest.mark.timeout(420)
@pytest.mark.parametrize("mode", ["default", "bypassPermissions"])
def test_ib_inside_an_agent_is_its_own_capability(
    claude_ib: IbRunner, anthropic: FakeAnthropic, repo: Path, rds: redis.Redis, namespace: str, mode: str
) -> None:
    assert sandbox_problem() is None, f"{sandbox_problem()}: tests/run.sh installs bubblewrap and socat"
    secret = repo / ".ib" / "redis" / "url"
    secret.parent.mkdir(parents=True)
    secret.write_text(f"redis://:{PASSWORD}@127.0.0.1:1/0\n")
    if mode == "bypassPermissions":  # as root Claude Code wants IS_SANDBOX=1 for it (from the tmux
        # server the first spawn starts); and no dialog
        claude_ib.env.update({"IS_SANDBOX": "1", "IB_AGENT_ENV": "IS_SANDBOX"})
        settings = Path(claude_ib.env["HOME"]) / ".claude" / "settings.json"
        settings.parent.mkdir(exist_ok=True)
        settings.write_text(json.dumps({"skipDangerousModePermissionPrompt": True}))
    fake = {"IB_AGENT_COMMAND": f"{sys.executable} -m worker.fake.agent"}
    victim = claude_ib.run(
        "new-agent", "fake: write v.txt v\nfake: commit victim's work", "--name", VICTIM, env=fake
    )
    assert victim.returncode == 0, victim.stderr
    wt = repo / ".ib" / "agents" / ATK / "repo"
    tries = attempts(repo, wt)
    anthropic.script(*(reply(a.call) for a in tries), reply("I HAVE COMPLETED THE GOAL"))
    claude_ib.env["IB_AGENT_COMMAND"] += f" --permission-mode {mode}"

    spawned = claude_ib.run("new-agent", "Try the boundary.", "--name", ATK)
    assert spawned.returncode == 0, spawned.stderr
    done = threading.Event()
    # the person says yes to whatever the agent asks: the boundary must hold all the same
    answers = (claude_ib, rds, Keys(namespace), done)
    approver = threading.Thread(target=_approve_all, args=answers, daemon=True)
    approver.start()
    try:
        anthropic.wait_for(
            lambda log: anthropic.pending() == 0 and len([r for r in log if r.is_turn]) > len(tries),
            timeout=240,
            what="the scripted conversation to end",
        )
    except AssertionError as e:
        pane = claude_ib.run("look", ATK, "--lines", "40").stdout
        raise AssertionError(f"{str(e)[:300]}\nthe agent's pane:\n{pane}") from None

    finally:
        done.set()
    results = anthropic.results_by_call()
    events = _events(rds, namespace)
    report = {a.what: results.get(a.id, (True, "(no result)")) for a in tries}
    print(json.dumps(report, indent=1))
    failures = []
    for attempt in tries:
        is_error, text = report[attempt.what]
        if attempt.what == "the leaked task shows nothing":
            ok = PASSWORD not in text
        elif attempt.says:
            ok = is_error and attempt.says in text and "Traceback" not in text
        else:
            ok = True
        if not ok:
            failures.append(f"{attempt.what}: {text[:300]}")
    # `ib` in a compound line: it reached the bus, or it failed loudly; never an id for a lost event
    is_error, text = report["notify in a compound line"]
    landed = "compound-marker" in events
    if not (landed or (is_error and SANDBOXED in text and not re.search(r"\d{13}-\d", text))):
        failures.append(f"compound notify neither landed nor failed: {text[:300]}")
    assert "plain-marker" in events, report["notify alone"]
    assert PASSWORD not in json.dumps(report)
    assert not (repo / "x.png").exists() and not (repo / "pwned").exists()
    assert not (repo / "pwned-by-pythonpath").exists(), "PYTHONPATH=… ib ran agent code outside the sandbox"
    assert "child" not in claude_ib.run("list").stdout.split()
    retry_until((repo / ".ib" / "agents" / VICTIM / "repo" / "v.txt").exists, what="victim's work")
    assert VICTIM in claude_ib.run("list").stdout  # alive
    assert git(repo, "log", "-1", "--format=%s", "main").strip() != "victim's work"
    assert git(repo, "status", "--porcelain") == ""
    assert not failures, "\n".join(failures)
