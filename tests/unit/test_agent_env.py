"""The agent's explicit environment: which names pass, how the `env -i` line reads, what is a secret."""

from __future__ import annotations

import subprocess

import pytest

from worker.agents.agent_env import (
    agent_path,
    env_command,
    passed_names,
)
from worker.secret_env import secret_name, secret_names, without_secrets


def test_passed_names_take_prefixed_ones_and_never_ib() -> None:
    names = passed_names(
        ["LC_ALL", "ANTHROPIC_VERTEX_PROJECT_ID", "IB_TELEGRAM_TOKEN", "AWS_SECRET"], ["GOPATH"]
    )
    assert {"HOME", "PATH"} & set(names) == {"HOME"}  # PATH is written out by the spawn, not passed
    assert {"LC_ALL", "ANTHROPIC_VERTEX_PROJECT_ID", "GOPATH"} <= set(names)
    assert "IB_TELEGRAM_TOKEN" not in names and "AWS_SECRET" not in names
    assert "IB_FAKE_SCRIPT" in passed_names(["IB_FAKE_SCRIPT"])


def test_the_persons_inbox_never_reaches_an_agent() -> None:
    """The person's session spawned the agent: its inbox variables are the person's, not the agent's."""
    spawner = ["CLAUDE_CODE_MESSAGING_SOCKET", "CLAUDE_CODE_MESSAGING_TOKEN", "CLAUDE_CODE_USE_VERTEX"]
    names = passed_names(spawner, ["CLAUDE_CODE_MESSAGING_TOKEN"])
    assert "CLAUDE_CODE_USE_VERTEX" in names
    assert not {"CLAUDE_CODE_MESSAGING_SOCKET", "CLAUDE_CODE_MESSAGING_TOKEN"} & set(names)


def test_env_command_runs_with_only_what_it_lists() -> None:
    line = env_command({"IB_AGENT_ID": "a 1", "PATH": "/usr/bin:/bin"}, ["HOME", "UNSET_ONE", "PATH"])
    out = subprocess.run(
        ["/bin/sh", "-c", f"exec {line} sh -c 'env | sort'"],
        env={"HOME": "/h", "IB_TELEGRAM_TOKEN": "t", "OTHER": "o", "PATH": "/evil"},
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split("\n")
    assert [e for e in out if e and not e.startswith(("PWD=", "SHLVL=", "_=", "OLDPWD="))] == [
        "HOME=/h",
        "IB_AGENT_ID=a 1",
        "PATH=/usr/bin:/bin",
    ]


@pytest.mark.parametrize(
    ("person", "ittybus", "expected"),
    [
        ("/venv/bin:/usr/bin:/bin", "/venv/bin", "/a/bin:/usr/bin:/bin"),
        ("/usr/bin:/venv/bin/:/bin", "/venv/bin", "/a/bin:/usr/bin:/bin"),
        ("/usr/local/bin:/usr/bin", "", "/a/bin:/usr/local/bin:/usr/bin"),
        ("/usr/bin::/usr/bin:/a/bin", "/venv/bin", "/a/bin:/usr/bin"),
    ],
    ids=["venv-first", "venv-later-with-slash", "no-venv-keeps-all", "empty-and-repeated"],
)
def test_agent_path_is_the_person_s_without_ittybus_s_environment(
    person: str, ittybus: str, expected: str
) -> None:
    assert agent_path(person, ittybus, "/a/bin") == expected


SECRETS = {
    "bot-token": ("IB_TELEGRAM_TOKEN", "1:x", True),
    "ib-password": ("IB_REDIS_PASSWORD", "p", True),
    "url-with-credentials": ("IB_REDIS_URL", "redis://:pw@h:6379/0", True),
    "url-without": ("IB_REDIS_URL", "unix:///r/redis.sock", False),
    "namespace": ("IB_NAMESPACE", "ib:", False),
    "not-ours": ("GITHUB_TOKEN", "x", False),
}


@pytest.mark.parametrize(("name", "value", "secret"), SECRETS.values(), ids=SECRETS.keys())
def test_secret_name(name: str, value: str, secret: bool) -> None:
    assert secret_name(name, value) is secret


def test_secret_names_in_the_global_environment() -> None:
    environment: dict[str, str | bool] = {
        "HOME": "/root",
        "IB_TELEGRAM_TOKEN": "1:x",
        "-IB_UNSET_TOKEN": True,
        "IB_NAMESPACE": "x",
    }
    assert secret_names(environment) == ["IB_TELEGRAM_TOKEN"]
    assert without_secrets({"IB_TELEGRAM_TOKEN": "1", "HOME": "/h"}) == {"HOME": "/h"}


def test_a_tmux_server_started_from_inside_an_agent_carries_no_agent_id() -> None:
    """Else it would sit above every pane and name that agent as the caller of all their ib commands."""
    assert without_secrets({"IB_AGENT_ID": "mgr", "IB_AGENT_ROLE": "manager"}) == {"IB_AGENT_ROLE": "manager"}
