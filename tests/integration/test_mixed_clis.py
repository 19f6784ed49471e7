"""One `ib auto --worktrees` over a DAG whose three tasks name three agent programs (issue 21, point 6):
the real Claude Code, Codex CLI and Gemini CLI (pinned), each offline against its own scripted API on
loopback at once, each writing one file, committing it and ending its turn; the loop merges all three
onto main in the DAG's order, unattended."""

from __future__ import annotations

import json
import subprocess
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import redis

from bus.wire.keys import Keys
from tests.bot_process import Worker, worker_running
from tests.cli import IbRunner, git
from tests.fake_anthropic import FakeAnthropic, bash
from tests.fake_anthropic import client_env as claude_env
from tests.fake_anthropic import reply as claude_reply
from tests.fake_anthropic import write_home as claude_home
from tests.fake_gemini.client import MODEL as GEMINI_MODEL
from tests.fake_gemini.client import GeminiMissing, gemini_binary
from tests.fake_gemini.client import client_env as gemini_env
from tests.fake_gemini.script import reply as gemini_reply
from tests.fake_gemini.script import shell, write_file
from tests.fake_gemini.server import FakeGemini
from tests.fake_openai import API_KEY as OPENAI_KEY
from tests.fake_openai import FakeOpenAI, codex_binary, exec_command, write_codex_home
from tests.fake_openai import reply as codex_reply
from tests.fake_openai.client import KEY_VARIABLE, CodexMissing
from tests.fake_openai.client import MODEL as CODEX_MODEL
from tests.streams import stream_entries
from worker.markers import COMPLETION_MARKER

pytestmark = [pytest.mark.claude, pytest.mark.codex, pytest.mark.gemini]
PROJECT = "mixed"
RUN = 600.0  # three cold CLIs one after the other, each turn through its hooks, on 2 busy cores


@dataclass(frozen=True)
class Stand:
    """The three scripted APIs, serving at once."""

    anthropic: FakeAnthropic
    openai: FakeOpenAI
    gemini: FakeGemini


@pytest.fixture
def mixed_ib(
    ib: IbRunner,
    tmux_socket: str,
    tmp_path: Path,
    repo: Path,
    anthropic: FakeAnthropic,
    claude_bin: Path,
    openai: FakeOpenAI,
    gemini: FakeGemini,
) -> IbRunner:
    """`ib` whose agents run the CLI their task names: Claude Code (the default) against `anthropic`,
    Codex against `openai` through the person's CODEX_HOME, Gemini CLI against `gemini`; one HOME, the
    person's, for Claude Code and Gemini CLI (each Gemini agent gets its own below it anyway)."""
    try:
        codex_binary()
        gemini_binary()
    except (CodexMissing, GeminiMissing) as e:
        pytest.fail(str(e))
    home = claude_home(tmp_path / "home", [repo])
    ib.unset_prefixes = ("IB_", "ANTHROPIC_", "CLAUDE", "CODEX_", "OPENAI_", "GEMINI_", "GOOGLE_")
    ib.env.update(
        {
            **claude_env(anthropic.base_url, home),
            **gemini_env(gemini.base_url, home),
            "CODEX_HOME": str(write_codex_home(tmp_path / "person-codex-home", openai.base_url, [])),
            KEY_VARIABLE: OPENAI_KEY,
            "IB_AGENT_ENV": KEY_VARIABLE,
            "IB_AGENT_COMMAND": str(claude_bin),
            # a model per program: Gemini CLI's default ("Auto") first asks a router model the stand-in
            # does not play; Codex keeps its apply_patch tool only with a model of its own catalog;
            # Claude Code keeps its default
            "IB_GEMINI_MODEL": GEMINI_MODEL,
            "IB_CODEX_MODEL": CODEX_MODEL,
            "IB_TMUX_SOCKET": tmux_socket,
            "IB_WORKER_ID": f"w-{uuid.uuid4().hex[:6]}",
        }
    )
    return ib


@pytest.fixture
def mixed_worker(mixed_ib: IbRunner, tmp_path: Path, rds: redis.Redis, keys: Keys) -> Iterator[Worker]:
    with worker_running(mixed_ib, tmp_path / "worker.log", rds, keys) as running:
        yield running


def _add(ib: IbRunner, task: str, cli: str, priority: int, after: str = "") -> None:
    words = ["task", "add", f"Add {task}.txt", "--id", task, "--project", PROJECT, "--cli", cli]
    words += ["--priority", str(priority), *(["--after", after] if after else [])]
    done = ib.run(*words, "--body", f"Write {task}.txt, commit it, and say you are done.")
    assert done.returncode == 0, done.stderr


def _commit(name: str) -> str:
    return f"git add {name} && git commit -qm 'Add {name}'"


def _script(stand: Stand) -> None:
    """Each agent writes its file, commits it and ends its turn with the completion marker: Claude Code
    and Codex in one shell command (their sandboxes run it unasked), Gemini CLI with its file tool (its
    approval mode writes unasked) and a git command (allowed unasked, as for the others)."""
    stand.anthropic.script(
        claude_reply("Writing it.", bash(f"echo claude > a.txt && {_commit('a.txt')}", "write and commit")),
        claude_reply(f"Added a.txt.\n\n{COMPLETION_MARKER}"),
    )
    stand.openai.script(
        codex_reply("Writing it.", exec_command(f"echo codex > b.txt && {_commit('b.txt')}")),
        codex_reply(f"Added b.txt.\n\n{COMPLETION_MARKER}"),
    )
    stand.gemini.script(
        gemini_reply("Writing it.", write_file("c.txt", "gemini\n")),
        gemini_reply("Committing it.", shell(_commit("c.txt"))),
        gemini_reply(f"Added c.txt.\n{COMPLETION_MARKER}"),
    )


def _events(rds: redis.Redis, keys: Keys) -> list[dict[str, Any]]:
    return [json.loads(fields["e"]) for _id, fields in stream_entries(rds, keys.events)]


@pytest.mark.timeout(int(RUN) + 60)
def test_a_dag_of_three_clis_runs_to_three_merges(
    mixed_ib: IbRunner,
    mixed_worker: Worker,
    anthropic: FakeAnthropic,
    openai: FakeOpenAI,
    gemini: FakeGemini,
    rds: redis.Redis,
    keys: Keys,
    repo: Path,
) -> None:
    ib = mixed_ib
    _add(ib, "a", "claude", 9)
    _add(ib, "b", "codex", 8)
    _add(ib, "c", "gemini", 7, after="a")
    _script(Stand(anthropic, openai, gemini))

    follower = ib.popen("auto", "--project", PROJECT, "--worktrees", "--json")
    try:
        out, err = follower.communicate(timeout=RUN)
    except subprocess.TimeoutExpired:
        follower.kill()
        out, err = follower.communicate()
        pytest.fail(f"auto mode did not finish:\n{out}\n{err}\n" + _told(rds, keys))
    assert follower.returncode == 0, err + _told(rds, keys)

    happened = _events(rds, keys)
    programs = {e["agent"]: e["data"].get("cli") for e in happened if e["type"] == "spawned"}
    merged = [e["task"] for e in happened if e["type"] == "merge_merged"]
    assert merged == ["a", "b", "c"], _told(rds, keys)
    assert programs == {"a": "claude", "b": "codex", "c": "gemini"}, programs
    # each program asked for the model its own setting names (IB_<CLI>_MODEL), Claude Code for its default
    assert {r.body.get("model") for r in openai.turns_taken()} == {CODEX_MODEL}
    assert {r.path.split("/models/")[1].split(":")[0] for r in gemini.turns_taken()} == {GEMINI_MODEL}
    assert not {r.body.get("model") for r in anthropic.turns_taken()} & {CODEX_MODEL, GEMINI_MODEL}
    finished = [e for e in happened if e["type"] == "auto_finished"]
    assert finished and finished[-1]["data"]["done"] == ["a", "b", "c"]

    assert git(repo, "branch", "--show-current").strip() == "main"
    for name, by in (("a.txt", "claude"), ("b.txt", "codex"), ("c.txt", "gemini")):
        assert (repo / name).read_text() == f"{by}\n", name
    merges = git(repo, "log", "--merges", "--format=%s", "main").splitlines()
    assert len(merges) == 3, merges
    assert "Add a.txt" in git(repo, "log", "--format=%s", "main")


def _told(rds: redis.Redis, keys: Keys) -> str:
    """What the bus saw, for a failing run."""
    return "\n".join(
        f"{e['type']} {e['agent'] or e['task'] or ''}: {e['msg'][:100]} {json.dumps(e['data'])[:200]}"
        for e in _events(rds, keys)
    )
