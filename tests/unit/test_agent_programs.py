"""The agent programs behind one interface (worker.programs): the registry by name, version shapes and the
tested range, Claude Code's command lines, and what Codex CLI and Gemini CLI say they still lack. Pure."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest

from worker.permissions.policy import merge_permissions
from worker.programs import probe
from worker.programs.claude.program import ClaudeCode
from worker.programs.codex.program import VERSION_SHAPE as CODEX_SHAPE
from worker.programs.codex.program import CodexCli
from worker.programs.confinement import Confinement
from worker.programs.gemini.program import VERSION_SHAPE as GEMINI_SHAPE
from worker.programs.gemini.program import GeminiCli
from worker.programs.program import (
    Launch,
    Sandbox,
    UnknownProgram,
    Version,
    version_warning,
)
from worker.programs.registry import PROGRAMS, program


def test_the_registry_names_each_program_by_its_cli_name() -> None:
    assert list(PROGRAMS) == ["claude", "codex", "gemini"]
    assert all(p.name == name for name, p in PROGRAMS.items())
    assert program(None).name == program("").name == "claude"  # records made before the choice


@pytest.mark.parametrize(
    ("name", "option", "message"),
    [
        (
            "cursor",
            "--cli",
            "--cli 'cursor' is not an agent program ittybus knows; use one of: claude, codex, gemini",
        ),
        (
            "Claude",
            "IB_DEFAULT_CLI",
            "IB_DEFAULT_CLI 'Claude' is not an agent program ittybus knows; use one of",
        ),
    ],
    ids=["unknown", "case-matters"],
)
def test_an_unknown_name_lists_the_known_ones(name: str, option: str, message: str) -> None:
    with pytest.raises(UnknownProgram, match=re.escape(message)):
        program(name, option=option)


@pytest.mark.parametrize(
    ("output", "shape", "expected"),
    [
        ("2.1.332 (Claude Code)\n", r"^\s*\d+\.\d+\.\d+ \(Claude Code\)", (2, 1, 332)),
        ("codex-cli 0.169.0\n", CODEX_SHAPE, (0, 169, 0)),
        ("0.61.0\n", GEMINI_SHAPE, (0, 61, 0)),
        ("0.61.0\n", CODEX_SHAPE, None),
        ("codex-cli 0.169.0\n", GEMINI_SHAPE, None),
        ("usage: foo [options]\n", None, None),
    ],
    ids=["claude", "codex", "gemini", "gemini-is-not-codex", "codex-is-not-gemini", "no-version"],
)
def test_parse_version(output: str, shape: str | None, expected: Version | None) -> None:
    assert probe.parse_version(output, re.compile(shape) if shape else None) == expected


@pytest.mark.parametrize(
    ("command", "word"),
    [("claude", "claude"), ("FOO=1 codex --x", "codex"), ("A=1", None), ("'open", None)],
    ids=["plain", "with-variable", "only-variables", "not-shell-words"],
)
def test_program_word(command: str, word: str | None) -> None:
    assert probe.program_word(command) == word


@pytest.mark.parametrize(
    ("cli", "version", "warned"),
    [
        ("claude", (2, 1, 332), None),
        ("claude", (2, 1, 78), None),
        ("claude", (2, 1, 77), "older"),
        ("claude", (2, 2, 0), "newer"),
        ("codex", (0, 169, 0), None),
        ("codex", (0, 170, 0), "newer"),
        ("gemini", (0, 60, 9), "older"),
        ("gemini", None, None),
    ],
    ids=[
        "claude-tested",
        "claude-oldest",
        "claude-older",
        "claude-newer",
        "codex",
        "codex-newer",
        "gemini-older",
        "unknown",
    ],
)
def test_a_version_outside_the_tested_range_is_warned(
    cli: str, version: Version | None, warned: str | None
) -> None:
    p = program(cli)
    warning = version_warning(p, version)
    if warned is None:
        assert warning is None
        return
    assert warning is not None
    assert warning.startswith(f"{p.title} {'.'.join(map(str, version or ()))} is {warned} than the versions")
    assert warning.endswith(p.release.install) and "starting it anyway" in warning


def test_each_program_says_how_to_install_its_tested_version() -> None:
    assert program("claude").release.install == "npm install -g @anthropic-ai/claude-code@2.1.332"
    assert program("codex").release.install == "npm install -g @openai/codex@0.169.0"
    assert program("gemini").release.install == "npm install -g @google/gemini-cli@0.61.0"
    missing = program("codex").missing("/nonexistent/codex")
    assert (
        missing == "Codex CLI (`codex`) is not installed or not on PATH: npm install -g @openai/codex@0.169.0"
    )
    assert program("gemini").missing("/nonexistent/gemini") is not None


def test_who_confines_the_commands() -> None:
    assert [p.sandbox for p in PROGRAMS.values()] == [
        Sandbox.OWN,
        Sandbox.OWN_IN_BUBBLEWRAP,
        Sandbox.BUBBLEWRAP,
    ]


def _launch(tmp_path: Path, resume: bool = False, model: str = "") -> Launch:
    return Launch(
        agent_id="a1",
        role="worker",
        command="claude",
        cwd=str(tmp_path / "repo"),
        root=str(tmp_path),
        folder=tmp_path / "agent",
        prompt_file=tmp_path / "agent" / "prompt.txt",
        ib_command="/opt/ib",
        permission_mode="acceptEdits",
        permissions=merge_permissions("worker", {}, {}),
        confinement=Confinement(str(tmp_path / "repo"), str(tmp_path), (), "/opt/ib"),
        session="s-1",
        model=model,
        resume=resume,
    )


def test_claude_code_starts_with_its_settings_session_and_prompt(tmp_path: Path) -> None:
    start = ClaudeCode().start(_launch(tmp_path, model="opus"))
    settings, prompt = tmp_path / "agent" / "settings.json", tmp_path / "agent" / "prompt.txt"
    assert start.words == f'claude --settings {settings} --session-id s-1 --model opus "$(cat {prompt})"'
    assert dict(start.environment) == {}


def test_a_manager_s_claude_code_waits_for_its_ib_mcp_as_the_person_s_does(tmp_path: Path) -> None:
    """A manager gets `ib mcp` (--mcp-config) and the start-up deadline `ib mcp install` gives the person's
    Claude Code; a worker neither."""
    manager = ClaudeCode().start(replace(_launch(tmp_path), role="manager"))
    assert "--mcp-config" in manager.words
    assert dict(manager.environment) == {"MCP_CONNECT_TIMEOUT_MS": "30000"}
    assert dict(ClaudeCode().start(_launch(tmp_path)).environment) == {}


def test_claude_code_resumes_its_conversation_without_a_new_prompt(tmp_path: Path) -> None:
    start = ClaudeCode().start(_launch(tmp_path, resume=True))
    assert start.words == f"claude --settings {tmp_path / 'agent' / 'settings.json'} --resume s-1"


@pytest.mark.parametrize("cli", [CodexCli(), GeminiCli()], ids=["codex", "gemini"])
def test_codex_and_gemini_start_and_read_their_session_logs(cli: CodexCli | GeminiCli) -> None:
    # both start: tests/integration/test_codex_agent.py and test_gemini_agents.py; their logs are read
    # by tests/unit/test_codex_rollout.py and test_gemini_chat.py
    assert cli.unfinished() is None
    assert cli.transcript_reader().feed(b"") == ([], 0)
    assert cli.usage_reader("", "").lines([]) == []


def test_a_version_check_cut_off_by_its_timeout_is_asked_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A loaded machine may take longer than VERSION_TIMEOUT once; that one miss is not kept, an answer is."""
    slow_once = tmp_path / "slow-once"
    marker = tmp_path / "ran"
    slow_once.write_text(f'#!/bin/sh\n[ -e {marker} ] || {{ touch {marker}; sleep 5; }}\necho "slow 1.2.3"\n')
    slow_once.chmod(0o755)
    monkeypatch.setattr(probe, "VERSION_TIMEOUT", 0.5)
    assert probe.reported_version(str(slow_once)) is None
    assert probe.reported_version(str(slow_once)) == (1, 2, 3)
    marker.unlink()  # a third call is answered from what was kept: no second slow run
    assert probe.reported_version(str(slow_once)) == (1, 2, 3)
    assert not marker.exists()
