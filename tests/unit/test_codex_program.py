"""Codex CLI's `AgentProgram` parts that write and build: the agent's own CODEX_HOME (the person's config
and login carried, the worktree trusted, hooks.json) and its command line (its sandbox, approvals,
notify, resume)."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from worker.permissions.policy import merge_permissions
from worker.programs.codex.program import HOOK_EVENTS, CodexCli
from worker.programs.confinement import Confinement
from worker.programs.program import Launch


def _launch(tmp_path: Path, mode: str = "acceptEdits", resume: bool = False, model: str = "") -> Launch:
    (tmp_path / "agent").mkdir(exist_ok=True)
    return Launch(
        agent_id="a1",
        role="worker",
        command="codex",
        cwd=str(tmp_path / "repo"),
        root=str(tmp_path),
        folder=tmp_path / "agent",
        prompt_file=tmp_path / "agent" / "prompt.txt",
        ib_command="/opt/ib",
        permission_mode=mode,
        permissions=merge_permissions("worker", {}, {}),
        confinement=Confinement(
            str(tmp_path / "repo"), str(tmp_path), (), "/opt/ib", git_dir="/a/git", cache="/a/cache"
        ),
        model=model,
        resume=resume,
    )


@pytest.fixture
def person(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The person's own CODEX_HOME, with a config and a login."""
    home = tmp_path / "person"
    home.mkdir()
    (home / "config.toml").write_text('model = "gpt-5.5"\n\n[model_providers.mine]\nname = "mine"\n')
    (home / "auth.json").write_text('{"OPENAI_API_KEY": "sk-x"}\n')
    monkeypatch.setenv("CODEX_HOME", str(home))
    return home


def test_the_agents_home_starts_from_the_persons(tmp_path: Path, person: Path) -> None:
    launch = _launch(tmp_path)
    CodexCli().prepare(launch)
    CodexCli().prepare(launch)  # a second prepare (a resume) changes nothing
    home = tmp_path / "agent" / "codex-home"
    config = (home / "config.toml").read_text()
    assert config.startswith('model = "gpt-5.5"\n\n[model_providers.mine]')
    assert config.count(f'[projects."{tmp_path / "repo"}"]\ntrust_level = "trusted"\n') == 1
    assert (home / "auth.json").resolve() == person / "auth.json"
    hooks = json.loads((home / "hooks.json").read_text())["hooks"]
    assert set(hooks) == set(HOOK_EVENTS)
    assert {h["hooks"][0]["command"] for h in (e[0] for e in hooks.values())} == {"/opt/ib hook codex"}
    assert (tmp_path / "agent" / "tmp").is_dir()


def test_without_a_persons_home_the_agent_still_gets_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "nowhere"))
    CodexCli().prepare(_launch(tmp_path))
    home = tmp_path / "agent" / "codex-home"
    assert (
        home / "config.toml"
    ).read_text() == f'[projects."{tmp_path / "repo"}"]\ntrust_level = "trusted"\n'
    assert not (home / "auth.json").exists()


def _boxed(line: str) -> tuple[list[str], list[str]]:
    """The bubblewrap words and Codex's own, from a start line (the prompt after them left out)."""
    words = shlex.split(line.rpartition(' "$(cat')[0] if ' "$(cat' in line else line)
    assert words[0] == "bwrap"
    at = words.index("--")
    return words[:at], words[at + 1 :]


def test_the_command_line_keeps_the_sandbox_and_asks_on_request(tmp_path: Path) -> None:
    start = CodexCli().start(_launch(tmp_path, model="gpt-5.5"))
    words = _boxed(start.words)[1]
    assert words[:3] == ["codex", "--no-daemon", "--dangerously-bypass-hook-trust"]
    assert words[words.index("--sandbox") + 1] == "workspace-write"
    assert words[words.index("--ask-for-approval") + 1] == "on-request"
    assert words[words.index("--model") + 1] == "gpt-5.5"
    settings = [words[i + 1] for i, word in enumerate(words) if word == "-c"]
    assert 'notify=["/opt/ib", "hook", "codex-notify"]' in settings
    assert 'sandbox_workspace_write.writable_roots=["/a/git", "/a/cache"]' in settings
    assert "sandbox_workspace_write.exclude_slash_tmp=true" in settings
    excluded = json.loads(next(s for s in settings if s.startswith("shell_environment_policy.exclude="))[33:])
    assert {"IB_*", "*KEY*", "*TOKEN*"} <= set(excluded)
    assert start.words.endswith(f' "$(cat {tmp_path / "agent" / "prompt.txt"})"')
    home, tmp = Path(start.environment["CODEX_HOME"]), Path(start.environment["TMPDIR"])
    assert home == tmp_path / "agent" / "codex-home" and not home.is_relative_to(tmp)


def test_bypass_mode_stops_asking_but_keeps_the_sandbox(tmp_path: Path) -> None:
    words = _boxed(CodexCli().start(_launch(tmp_path, mode="bypassPermissions")).words)[1]
    assert words[words.index("--ask-for-approval") + 1] == "never"
    assert words[words.index("--sandbox") + 1] == "workspace-write"


def test_a_resume_continues_the_agents_last_session_without_a_prompt(tmp_path: Path) -> None:
    line = CodexCli().start(_launch(tmp_path, resume=True)).words
    assert _boxed(line)[1][:4] == ["codex", "resume", "--last", "--no-daemon"]
    assert "$(cat" not in line


def _pairs(words: list[str], flag: str) -> list[str]:
    return [words[i + 1] for i, word in enumerate(words[:-1]) if word == flag]


def test_codex_runs_in_the_box_that_hides_the_secrets_and_keeps_its_login(
    tmp_path: Path, person: Path
) -> None:
    """Codex's own sandbox lets commands read anything: the box around it hides the repository's `.ib/`
    and `.env` and the person's Codex home, but for the login Codex needs; its own folders stay writable."""
    box = _boxed(CodexCli().start(_launch(tmp_path)).words)[0]
    agent = tmp_path / "agent"
    assert {str(agent / "codex-home"), str(agent / "tmp"), str(tmp_path / "repo")} <= set(
        _pairs(box, "--bind")
    )
    assert {f"{tmp_path}/.ib", str(person)} <= set(_pairs(box, "--tmpfs"))
    assert str(person / "auth.json") in _pairs(box, "--ro-bind-try")
    assert box.index(str(person / "auth.json")) > box.index(str(person))  # shown again after the hiding
    assert box[box.index("--chdir") + 1] == str(tmp_path / "repo")


@pytest.fixture
def unsigned(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A person's CODEX_HOME with no login, and no OPENAI_API_KEY."""
    home = tmp_path / "person"
    home.mkdir()
    monkeypatch.setenv("CODEX_HOME", str(home))
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    return home


def test_a_person_never_signed_in_is_told_before_the_agent_waits_at_the_sign_in_screen(
    tmp_path: Path, unsigned: Path
) -> None:
    [note] = CodexCli().notes("codex", str(tmp_path))
    assert f"Codex CLI has no login in {unsigned}" in note and "`codex login`" in note


@pytest.mark.parametrize(
    ("file", "text", "key"),
    [
        pytest.param("auth.json", '{"tokens": {}}\n', "", id="a-login"),
        pytest.param("", "", "sk-x", id="a-key"),
        pytest.param("config.toml", 'model_provider = "local"\n', "", id="a-provider-of-their-own"),
    ],
)
def test_a_person_signed_in_any_way_is_told_nothing(
    tmp_path: Path, unsigned: Path, monkeypatch: pytest.MonkeyPatch, file: str, text: str, key: str
) -> None:
    if file:
        (unsigned / file).write_text(text)
    if key:
        monkeypatch.setenv("OPENAI_API_KEY", key)
    assert CodexCli().notes("codex", str(tmp_path)) == []
