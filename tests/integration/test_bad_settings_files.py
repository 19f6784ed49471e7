"""A `.env` that is a FIFO, a link to /dev/zero, 50 MB or binary, a bogus IB_DEFAULT_CLI or
IB_ATTENTION_CHANNELS, a `.ib/config.json` of the wrong shape: each refused in one line naming the file
(or the setting) and why, the same line from `ib list`, `ib config`, `ib notify` and the hooks, which still
exit 0. The timeouts turn a hang into a failure; no elapsed time is asserted."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.cli import IbRunner

BOUND = 20  # seconds: a command that blocks on the file fails the test instead of hanging it
STOP = {"hook_event_name": "Stop", "last_assistant_message": "done"}


def _fifo(env: Path) -> str:
    os.mkfifo(env)
    return f"{env} is a FIFO (named pipe), not a regular file"


def _dev_zero(env: Path) -> str:
    env.symlink_to("/dev/zero")
    return f"{env} (a link to /dev/zero) is a character device, not a regular file"


def _fifty_megabytes(env: Path) -> str:
    line = b"IB_LISTENER_NAME=big\n"
    with env.open("wb") as f:
        for _ in range(50 * 1024 * 1024 // len(line) + 1):
            f.write(line)
    size = env.stat().st_size
    return f"{env} is {size / (1024 * 1024):.1f} MiB, over the 1 MiB ittybus reads of a settings file"


def _binary(env: Path) -> str:
    env.write_bytes(b"IB_LISTENER_NAME=x\n\x00\x01\x02\xff")
    return f"{env} is binary (a NUL byte at byte 19), not text"


def _not_utf8(env: Path) -> str:
    env.write_bytes(b"IB_LISTENER_NAME=caf\xe9\n")
    return f"{env} is not UTF-8 text (byte 20 is 0xe9)"


BAD_FILES: dict[str, Callable[[Path], str]] = {
    "fifo": _fifo,
    "dev-zero": _dev_zero,
    "50-MB": _fifty_megabytes,
    "binary": _binary,
    "not-utf8": _not_utf8,
}


def _refusals(ib: IbRunner) -> dict[str, tuple[int, str]]:
    """(exit code, stderr) of each command that reads the settings."""
    payload = json.dumps({**STOP, "cwd": str(ib.cwd)})
    runs = {
        "list": ib.run("list", timeout=BOUND),
        "config": ib.run("config", timeout=BOUND),
        "notify": ib.run("notify", "info", "hello", timeout=BOUND),
        "hook stop": ib.run("hook", "stop", stdin=payload, env={"IB_AGENT_ID": "a1"}, timeout=BOUND),
        "hook session-start": ib.run(
            "hook", "session-start", stdin=payload, env={"IB_AGENT_ID": "a1"}, timeout=BOUND
        ),
    }
    return {name: (done.returncode, done.stderr) for name, done in runs.items()}


@pytest.mark.parametrize("make", BAD_FILES.values(), ids=BAD_FILES.keys())
def test_a_dotenv_ittybus_must_not_read_is_refused_in_one_line_by_every_command(
    ib: IbRunner, make: Callable[[Path], str]
) -> None:
    said = make(ib.cwd / ".env")
    for command, (code, stderr) in _refusals(ib).items():
        assert code == (0 if command.startswith("hook") else 1), (command, stderr)
        assert len(stderr.splitlines()) == 1, (command, stderr)
        assert stderr.startswith(f"ib {command}: error: {said}"), (command, stderr)


def test_a_link_to_a_regular_dotenv_is_read(ib: IbRunner, tmp_path: Path) -> None:
    target = tmp_path / "settings.env"
    target.write_text("IB_LISTENER_NAME=linked\n")
    (ib.cwd / ".env").symlink_to(target)
    rows = {row["setting"]: row for row in json.loads(ib.run("config", "--json").stdout)}
    assert rows["IB_LISTENER_NAME"]["value"] == "linked"


SETTINGS = {
    "cli-bogus": ("IB_DEFAULT_CLI", "bogus", "must be one of claude, codex, gemini (empty: claude)"),
    "cli-nan": ("IB_DEFAULT_CLI", "nan", "must be one of claude, codex, gemini (empty: claude)"),
    "cli-negative": ("IB_DEFAULT_CLI", "-1", "must be one of claude, codex, gemini (empty: claude)"),
    "channels-bogus": ("IB_ATTENTION_CHANNELS", "bogus", "channel 1 is not a URL: use apprise URLs"),
    "channels-nan": ("IB_ATTENTION_CHANNELS", "nan", "channel 1 is not a URL: use apprise URLs"),
    "channels-negative": ("IB_ATTENTION_CHANNELS", "ntfy://ntfy.sh/t,-1", "channel 2 is not a URL"),
}


@pytest.mark.parametrize(("name", "value", "says"), SETTINGS.values(), ids=SETTINGS.keys())
@pytest.mark.parametrize("where", ["environment", "dotenv"])
def test_a_bogus_setting_is_refused_in_one_line_saying_what_is_accepted(
    ib: IbRunner, name: str, value: str, says: str, where: str
) -> None:
    if where == "dotenv":
        (ib.cwd / ".env").write_text(f"{name}={value}\n")
        ib.env.pop(name, None)
    else:
        ib.env[name] = value
    source = str(ib.cwd / ".env") if where == "dotenv" else "the environment"
    for command, (code, stderr) in _refusals(ib).items():
        assert code == (0 if command.startswith("hook") else 1), (command, stderr)
        assert len(stderr.splitlines()) == 1, (command, stderr)
        assert stderr.startswith(f"ib {command}: error: bad configuration: {name}: {says}"), stderr
        assert stderr.rstrip().endswith(f"(set in {source})"), stderr
        if name == "IB_ATTENTION_CHANNELS":  # it may hold passwords: never shown back
            assert value not in stderr.removeprefix(f"ib {command}: error: ").partition(" (set in")[0]


@pytest.mark.parametrize("value", ["codex", "gemini", ""])
def test_a_known_default_cli_is_taken(ib: IbRunner, value: str) -> None:
    ib.env["IB_DEFAULT_CLI"] = value
    rows = {row["setting"]: row for row in json.loads(ib.run("config", "--json").stdout)}
    assert rows["IB_DEFAULT_CLI"]["value"] == (value or "claude")


CONFIGS = {
    "array": ([], "holds a JSON array; it must be an object like"),
    "unknown-top": ({"permision": {}}, "has an unknown field permision: the fields there are permissions"),
    "permissions-string": ({"permissions": "all"}, "has permissions as a JSON string; it must be an object"),
    "unknown-role": (
        {"permissions": {"wroker": {}}},
        "has an unknown field permissions.wroker: the fields there are manager, worker",
    ),
    "other-role-wrong": (
        {"permissions": {"manager": {"allow": "Bash(ls)"}}},
        "has permissions.manager.allow as a JSON string; it must be a list of rule strings",
    ),
    "rule-number": (
        {"permissions": {"worker": {"deny": ["Bash(rm:*)", 7]}}},
        "has permissions.worker.deny[1] as a JSON number; it must be a rule string",
    ),
}


@pytest.mark.parametrize(("content", "says"), CONFIGS.values(), ids=CONFIGS.keys())
def test_a_config_file_of_the_wrong_shape_is_refused_naming_the_file_and_the_field(
    agents_ib: IbRunner, content: object, says: str
) -> None:
    config = agents_ib.cwd / ".ib" / "config.json"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(json.dumps(content))
    done = agents_ib.run("new-agent", "a goal", "--name", "cfg", timeout=BOUND)
    assert done.returncode == 1
    assert len(done.stderr.splitlines()) == 1, done.stderr
    assert done.stderr.startswith(f"ib new-agent: error: {config} {says}"), done.stderr


def test_a_config_file_that_is_a_fifo_is_refused(agents_ib: IbRunner) -> None:
    config = agents_ib.cwd / ".ib" / "config.json"
    config.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(config)
    done = agents_ib.run("new-agent", "a goal", "--name", "cfg", timeout=BOUND)
    assert done.returncode == 1
    assert done.stderr.strip() == (
        f"ib new-agent: error: {config} is a FIFO (named pipe), not a regular file: ittybus reads "
        "settings only from a regular file; replace it with one or remove it"
    )


def test_hooks_install_refuses_a_claude_settings_file_that_is_a_fifo(ib: IbRunner) -> None:
    settings = ib.cwd / ".claude" / "settings.local.json"
    settings.parent.mkdir()
    os.mkfifo(settings)
    done = ib.run("hooks", "install", timeout=BOUND)
    assert done.returncode == 1
    assert done.stderr.strip() == (
        f"ib hooks: error: {settings} is a FIFO (named pipe), not a regular file: ittybus reads "
        "settings only from a regular file; replace it with one or remove it"
    )
