"""Which hook events a Claude Code version has, and whether it trusts a folder (~/.claude.json)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from worker.programs.claude.trust import trust, trusted_in
from worker.programs.claude.version import lacking_events, parse_version, program_problem

EVENTS = ("SessionStart", "Stop", "PermissionRequest", "StopFailure", "Notification")


@pytest.mark.parametrize(
    ("text", "lacking"),
    [
        ("2.1.332 (Claude Code)", ()),
        ("2.1.77 (Claude Code)", ("StopFailure",)),
        ("2.0.10 (Claude Code)", ("PermissionRequest", "StopFailure")),
        ("no version here", ()),  # unknown: take it to have them all
    ],
)
def test_lacking_events(text: str, lacking: tuple[str, ...]) -> None:
    assert lacking_events(parse_version(text), EVENTS) == lacking


@pytest.mark.parametrize(
    ("config", "folder", "trusted"),
    [
        ({"projects": {"/r": {"hasTrustDialogAccepted": True}}}, "/r", True),
        ({"projects": {"/r": {"hasTrustDialogAccepted": True}}}, "/r/.ib/agents/a/repo", True),
        ({"projects": {"/r": {"hasTrustDialogAccepted": False}}}, "/r", False),
        ({"projects": {"/other": {"hasTrustDialogAccepted": True}}}, "/r", False),
        ({"projects": []}, "/r", False),
        ([], "/r", False),
    ],
    ids=["root", "worktree-below", "refused", "other-folder", "bad-projects", "bad-file"],
)
def test_trusted_in(config: object, folder: str, trusted: bool) -> None:
    assert trusted_in(config, folder) is trusted


@pytest.mark.parametrize(
    ("command", "says"),
    [
        ("sh -c true", None),
        ("FOO=1 BAR=2 sh", None),
        ("claude --model x", "Claude Code (`claude`) is not installed or not on PATH"),
        (
            "no-such-program-here",
            "the agent program 'no-such-program-here' (IB_AGENT_COMMAND) is not installed",
        ),
        ("FOO=1 no-such-program-here", "the agent program 'no-such-program-here'"),
        ("", "names no program"),
        ("FOO=1", "names no program"),
        ("'unclosed", "is not valid shell words"),
    ],
    ids=[
        "found",
        "after-variables",
        "claude-missing",
        "other-missing",
        "missing-after-variables",
        "empty",
        "only-variables",
        "bad-quoting",
    ],
)
def test_program_problem(command: str, says: str | None) -> None:
    found = program_problem(command, path="/usr/bin:/bin")  # a PATH with sh and without claude
    assert found is None if says is None else (found is not None and says in found)


def test_trust_records_the_folder_itself_and_keeps_the_rest(tmp_path: Path) -> None:
    config = {"projects": {"/r": {"hasTrustDialogAccepted": True, "history": [1]}}, "theme": "dark"}
    (tmp_path / ".claude.json").write_text(json.dumps(config))
    trust("/r/.ib/agents/a/repo", home=str(tmp_path))  # trusted through /r, yet Claude Code would ask
    got = json.loads((tmp_path / ".claude.json").read_text())
    assert got["projects"]["/r/.ib/agents/a/repo"] == {"hasTrustDialogAccepted": True}
    assert got["projects"]["/r"]["history"] == [1] and got["theme"] == "dark"
    assert [p.name for p in tmp_path.iterdir()] == [".claude.json"]


def test_trust_leaves_a_missing_or_broken_config_alone(tmp_path: Path) -> None:
    trust("/r", home=str(tmp_path))
    assert not (tmp_path / ".claude.json").exists()
    (tmp_path / ".claude.json").write_text("{not json")
    trust("/r", home=str(tmp_path))
    assert (tmp_path / ".claude.json").read_text() == "{not json"
