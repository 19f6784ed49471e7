"""The hot modules (hooks, `ib notify`, the `ib` entry point) run on every tool call of every agent:
importing them, and deciding a file tool call, loads none of the slow standard or third-party modules.

Each probe runs in a fresh interpreter and reports what it loaded beyond the modules the interpreter had
already loaded when the probe started (what `python -c pass` loads: site, encodings, .pth hooks)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SLOW = frozenset(
    {"re", "shlex", "fnmatch", "typing", "dataclasses", "json", "pydantic", "redis", "typer", "rich"}
    | {"libtmux"}  # ~70 ms: the worker's tmux layer
)
WORKTREE = "/proj/.ib/agents/a1/repo"

PROBE = """
import sys
started = set(sys.modules)
{body}
print(" ".join(sorted({{name.partition(".")[0] for name in set(sys.modules) - started}})))
"""

DECIDE = """
from worker.hooks.pre_tool_use import read_permissions
from worker.permissions.policy import decide
permissions = read_permissions("/nonexistent/settings.json")
decision = decide({tool!r}, {tool_input!r}, worktree={worktree!r}, root="/proj", permissions=permissions,
                  home="/home/dev")
print(decision.verdict)
"""


def _loaded(body: str) -> tuple[list[str], set[str]]:
    """The probe's own output lines, and the top-level names of the modules it loaded."""
    done = subprocess.run(
        [sys.executable, "-c", PROBE.format(body=body)],
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO,
    )
    *printed, loaded = done.stdout.splitlines()
    return printed, set(loaded.split())


HOT_MODULES = {
    "pre-tool-use": "worker.hooks.pre_tool_use",
    "primary-guard": "worker.hooks.primary_guard",
    "post-tool-use": "worker.hooks.post_tool_use",
    "stop": "worker.hooks.claude_stop",
    "turn-end": "worker.hooks.stop",
    "session-start": "worker.hooks.session_start",
    "event": "worker.hooks.claude_event",
    "outcome": "worker.hooks.agent_event",
    "codex": "worker.hooks.codex_hook",
    "codex-notify": "worker.hooks.codex_notify",
    "gemini": "worker.hooks.gemini_event",
    "changes": "worker.hooks.changes",
    "hook-outcome": "worker.programs.hook_outcome",
    "claude-signals": "worker.programs.claude.signals",
    "claude-hook": "worker.programs.claude.hook",
    "codex-signals": "worker.programs.codex.signals",
    "gemini-signals": "worker.programs.gemini.signals",
    "gemini-hook": "worker.programs.gemini.hook",
    "notify": "worker.hooks.notify",
    "entry": "worker.cli.entry",
    "transcript-record": "worker.hooks.transcript_record",
    "codex-usage": "worker.programs.codex.usage",  # the Stop hook reads a Codex turn's tokens with it
    "gemini-usage": "worker.programs.gemini.usage",
}


@pytest.mark.parametrize("module", HOT_MODULES.values(), ids=HOT_MODULES.keys())
def test_importing_a_hot_module_loads_nothing_slow(module: str) -> None:
    _, loaded = _loaded(f"import {module}")
    assert module.partition(".")[0] in loaded
    assert loaded & SLOW == set()


FILE_CALLS: dict[str, tuple[str, dict[str, object], str]] = {
    "read-in-worktree": ("Read", {"file_path": WORKTREE + "/src/a.py"}, "allow"),
    "read-main-repo": ("Read", {"file_path": "/proj/README.md"}, "deny"),
    "read-outside": ("Read", {"file_path": "/etc/passwd"}, "deny"),
    "read-other-agent": ("Read", {"file_path": "/proj/.ib/agents/b2/repo/a.py"}, "deny"),
    "write-tmp": ("Write", {"file_path": "/tmp/x", "content": "x"}, "allow"),
    "edit-relative": ("Edit", {"file_path": "a.py", "old_string": "a", "new_string": "b"}, "allow"),
    "grep-worktree": ("Grep", {"pattern": "x[0-9]+", "path": WORKTREE}, "allow"),
    "ls-claude-home": ("LS", {"path": "~/.claude"}, "allow"),
    "plan-mode": ("EnterPlanMode", {}, "deny"),
    "other-tool": ("WebSearch", {"query": "python"}, "none"),
}


@pytest.mark.parametrize(("tool", "tool_input", "verdict"), FILE_CALLS.values(), ids=FILE_CALLS.keys())
def test_a_file_tool_decision_loads_nothing_slow(
    tool: str, tool_input: dict[str, object], verdict: str
) -> None:
    printed, loaded = _loaded(DECIDE.format(tool=tool, tool_input=tool_input, worktree=WORKTREE))
    assert printed == [verdict]
    assert loaded & (SLOW | {"collections"}) == set()


def test_the_probe_sees_what_a_bash_decision_loads() -> None:
    """Bash calls parse the command line: shlex is allowed there, and the probe must notice it."""
    body = DECIDE.format(tool="Bash", tool_input={"command": "cd /proj && ls"}, worktree=WORKTREE)
    printed, loaded = _loaded(body)
    assert printed == ["deny"]
    assert "shlex" in loaded


# Everyday commands: what building the application for one word loads (the CLI imports only that word's
# module, and `ib --help` every module) — none of the heavy areas its command body loads when it runs.
EVERYDAY = (
    "list",
    "info",
    "look",
    "send",
    "status",
    "approve",
    "deny",
    "answer",
    "task",
    "cost",
    "events",
    "web",
)
EVERYDAY_SLOW = frozenset(
    {"redis", "pydantic_settings", "rich", "libtmux", "PIL", "asyncio"}
    | {"bus.settings.settings", "bus.commands.worker_commands", "bus.stores.hash_record"}
    | {"worker.service.process", "worker.git.repo"}
    | {"worker.tmux.client", "worker.agents.talk", "worker.auto.loop", "worker.review.review"}
    | {"worker.frontends.dashboard", "worker.frontends.status_node", "worker.merges.land"}
    | {"web", "starlette", "jinja2", "uvicorn"}  # ib web's, loaded only when it runs
)
BUILD = """
import typer.main
from worker.cli.app import build
typer.main.get_command(build({word!r}))
"""


def _loaded_modules(body: str) -> set[str]:
    """Every module the probe loaded, by its full name and by its top-level package's name."""
    probe = PROBE.replace('name.partition(".")[0] for name', "name for name")
    done = subprocess.run(
        [sys.executable, "-c", probe.format(body=body)], capture_output=True, text=True, check=True, cwd=REPO
    )
    names = set(done.stdout.split())
    return names | {name.partition(".")[0] for name in names}


@pytest.mark.parametrize("word", [*EVERYDAY, None], ids=[*EVERYDAY, "--help"])
def test_building_an_everyday_command_loads_nothing_heavy(word: str | None) -> None:
    loaded = _loaded_modules(BUILD.format(word=word))
    assert "worker.cli.app" in loaded
    assert loaded & EVERYDAY_SLOW == set()


def test_the_warm_server_preloads_neither_the_bot_nor_the_page() -> None:
    """The warm server loads every module a command may import before it forks; `ib bot` and `ib web` run in
    processes of their own (worker.cli.warm.wire.UNSERVED), so their packages stay out of it."""
    loaded = _loaded_modules("from worker.cli.warm.server import _preload\n_preload()")
    assert loaded & {"bot", "telegram", "web", "jinja2"} == set()


def test_a_bot_without_attention_channels_loads_no_apprise() -> None:
    """apprise (its plugins: a third of `ib bot`'s start) is loaded only for the channels it delivers to."""
    loaded = _loaded_modules(
        "import bot.app\nfrom bot.attention.channels import load_channels\nload_channels('')"
    )
    assert "bot.app" in loaded
    assert "apprise" not in loaded
    with_one = _loaded_modules(
        "from bot.attention.channels import load_channels\nload_channels('json://localhost')"
    )
    assert "apprise" in with_one
