"""Settings: the pydantic class and the hot paths' light reader agree; .env parsing; where the root is."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from bus.errors import ConfigError
from bus.settings.hotconf import read_hotconf
from bus.settings.repo_paths import agent_from_path, repo_root
from bus.settings.settings import Settings, load_settings

ENVS = [
    {},
    {"IB_REDIS_URL": "redis://h:1/2", "IB_NAMESPACE": "x:", "IB_EVENTS_MAXLEN": "500"},
    {
        "IB_CONNECT_TIMEOUT": "0.25",
        "IB_MAX_MESSAGE_BYTES": "2048",
        "IB_LISTENER_NAME": "me",
        "IB_AGENT_ID": "a-1",
    },
    {"IB_SPOOL_DIR": "/tmp/spool-x"},
]


@pytest.mark.parametrize("env", ENVS, ids=["defaults", "bus", "limits", "spool"])
def test_hotconf_matches_settings(
    env: dict[str, str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    for name in [n for n in __import__("os").environ if n.startswith("IB_")]:
        monkeypatch.delenv(name)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.chdir(tmp_path)
    full = Settings()
    hot = read_hotconf(cwd=str(tmp_path))
    assert hot.redis_url == full.redis_url
    assert hot.namespace == full.namespace
    assert hot.events_maxlen == full.events_maxlen
    assert hot.connect_timeout == full.connect_timeout
    assert hot.spool_dir == str(full.spool_dir)
    assert hot.max_message_bytes == full.max_message_bytes
    assert hot.listener_name == full.listener_name
    assert hot.agent_id == full.agent_id


@pytest.mark.parametrize(
    ("env", "says"),
    [
        ({"IB_NAMESPACE": "a b"}, "IB_NAMESPACE"),
        ({"IB_EVENTS_MAXLEN": "x"}, "IB_EVENTS_MAXLEN"),
        ({"IB_CONNECT_TIMEOUT": "0"}, "IB_CONNECT_TIMEOUT"),
        ({"IB_REDIS_URL": "garbage"}, "IB_REDIS_URL: 'garbage' is not a URL"),
        ({"IB_REDIS_URL": "redis://h:x"}, "IB_REDIS_URL: cannot read 'redis://h:x': port must be a number"),
    ],
    ids=["namespace", "maxlen", "timeout", "url", "url-port"],
)
def test_hotconf_bad_values_name_the_setting(
    env: dict[str, str], says: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(ConfigError, match=says):
        read_hotconf(environ=env, cwd="/")
    for name, value in env.items():  # the full settings refuse the same values, naming the same setting
        monkeypatch.setenv(name, value)
    with pytest.raises(ConfigError, match=says.split(":", maxsplit=1)[0]):
        load_settings(cwd="/")


def test_full_settings_never_show_a_password() -> None:
    with pytest.raises(ConfigError) as caught:
        load_settings(cwd="/", redis_url="redis://u:hunter2@h:port")
    assert "hunter2" not in str(caught.value) and "port must be a number" in str(caught.value)


def test_repo_root_and_agent_from_path(tmp_path: Path) -> None:
    (tmp_path / "r" / ".git").mkdir(parents=True)
    deep = tmp_path / "r" / "src" / "pkg"
    deep.mkdir(parents=True)
    assert repo_root(str(deep)) == str(tmp_path / "r")
    worktree = tmp_path / "r" / ".ib" / "agents" / "agent-7" / "repo" / "lib"
    assert repo_root(str(worktree)) == str(tmp_path / "r")
    assert agent_from_path(str(worktree)) == "agent-7"
    assert agent_from_path(str(deep)) is None
    assert repo_root("/") is None or Path("/.git").is_dir()


def test_permission_mode_by_role() -> None:
    assert Settings().permission_mode_for("manager") == "acceptEdits"  # the documented default
    settings = Settings(permission_mode="PLAN", worker_permission_mode="dontask", manager_permission_mode="")
    assert (settings.permission_mode_for("manager"), settings.permission_mode_for("worker")) == (
        "plan",
        "dontAsk",
    )


@pytest.mark.parametrize("name", ["permission_mode", "manager_permission_mode", "worker_permission_mode"])
def test_an_unknown_permission_mode_is_one_line(name: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load_settings(cwd="/", **{name: "yolo"})
    assert str(caught.value) == (
        f"bad configuration: IB_{name.upper()}: must be one of acceptEdits, default, manual, plan, auto, "
        "dontAsk, bypassPermissions (got 'yolo') (set in the call)"
    )


def test_a_model_per_program_falls_back_to_ib_model() -> None:
    settings = Settings(model="shared-1", codex_model="gpt-5.5", gemini_model="  ")
    assert [settings.model_for(p) for p in ("claude", "codex", "gemini", "fake")] == [
        "shared-1",
        "gpt-5.5",
        "shared-1",  # blank: unset
        "shared-1",
    ]
    assert Settings(model="", claude_model=" claude-opus-5-5 ").model_for("claude") == "claude-opus-5-5"
    assert Settings(model="").model_for("codex") == ""  # none anywhere: the program's default


@pytest.mark.parametrize(
    ("given", "said"),
    [
        ({"events_maxlen": 5}, "must be at least 100"),
        ({"connect_timeout": 0}, "must be more than 0"),
        ({"connect_timeout": 31.5}, "must be at most 30"),
        ({"embedded_port": 80}, "must be a port from 1024 to 65535"),
        ({"redis_wait_replicas": 101}, "must be at most 100"),
    ],
)
def test_a_number_a_program_gives_has_the_bounds_a_person_gets(given: dict[str, object], said: str) -> None:
    """The bounds are written once (setting_checks.NUMBERS): a value passed as a number meets the same."""
    with pytest.raises(ValidationError, match=said):
        Settings(**given)  # type: ignore[arg-type]


def test_numbers_within_their_bounds_and_unset_ones_are_kept() -> None:
    settings = Settings(events_maxlen=100, connect_timeout=0.5, embedded_port=None, send_delay=0)
    assert (settings.events_maxlen, settings.connect_timeout, settings.embedded_port) == (100, 0.5, None)
