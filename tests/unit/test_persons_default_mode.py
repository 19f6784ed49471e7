"""Which `defaultMode` the person set for their own Claude Code sessions, and where (spawn says it does not
reach agents). Files on disk, nothing else."""

from __future__ import annotations

import json
from pathlib import Path

from worker.programs.claude.settings import persons_default_mode, persons_inbound


def _settings(path: Path, body: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(body if isinstance(body, str) else json.dumps(body), encoding="utf-8")


def test_none_set(tmp_path: Path) -> None:
    assert persons_default_mode(str(tmp_path / "repo"), str(tmp_path / "home")) is None


def test_the_repositorys_local_file_outranks_its_shared_one_and_the_users(tmp_path: Path) -> None:
    repo, home = tmp_path / "repo", tmp_path / "home"
    _settings(home / ".claude" / "settings.json", {"permissions": {"defaultMode": "auto"}})
    assert persons_default_mode(str(repo), str(home)) == ("auto", str(home / ".claude" / "settings.json"))
    _settings(repo / ".claude" / "settings.json", {"permissions": {"defaultMode": "plan"}})
    assert persons_default_mode(str(repo), str(home)) == ("plan", str(repo / ".claude" / "settings.json"))
    local = repo / ".claude" / "settings.local.json"
    _settings(local, {"permissions": {"defaultMode": "default"}})
    assert persons_default_mode(str(repo), str(home)) == ("default", str(local))


def test_files_of_the_wrong_shape_set_nothing(tmp_path: Path) -> None:
    repo, home = tmp_path / "repo", tmp_path / "home"
    _settings(home / ".claude" / "settings.json", {"permissions": {"defaultMode": "auto"}})
    for body in (
        "{not json",
        [1, 2],
        {"permissions": "auto"},
        {"permissions": {"defaultMode": 5}},
        "\x00\xff",
    ):
        _settings(repo / ".claude" / "settings.local.json", body)
        assert persons_default_mode(str(repo), str(home))[0] == "auto"  # type: ignore[index]


def test_the_persons_cross_session_setting_is_read_as_claude_code_ranks_it(tmp_path: Path) -> None:
    repo, home = tmp_path / "repo", tmp_path / "home"
    (repo / ".claude").mkdir(parents=True)
    (home / ".claude").mkdir(parents=True)
    assert persons_inbound(str(repo), str(home)) is None
    (home / ".claude" / "settings.json").write_text('{"crossSessionInbound": "accept"}')
    assert persons_inbound(str(repo), str(home)) == ("accept", str(home / ".claude" / "settings.json"))
    local = repo / ".claude" / "settings.local.json"
    local.write_text('{"crossSessionInbound": "hold"}')  # a repository may tighten it
    assert persons_inbound(str(repo), str(home)) == ("hold", str(local))
    local.write_text('{"crossSessionInbound": "accept"}')  # never loosen it: the user's own counts
    (home / ".claude" / "settings.json").write_text("{}")
    assert persons_inbound(str(repo), str(home)) is None
