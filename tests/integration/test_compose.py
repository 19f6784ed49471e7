"""compose.yaml is a valid Compose file and runs what the product needs: checked against the Compose
Specification's JSON schema, vendored in tests/fixtures/compose-spec/ (no engine and no `docker compose`
here, and nothing is fetched), then service by service: Redis with AOF on a volume, the worker with the
repository mounted, the bot, settings through environment variables."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from bus.settings.settings import Settings

TOP = Path(__file__).resolve().parents[2]
SCHEMA = TOP / "tests" / "fixtures" / "compose-spec" / "compose-spec.json"


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load((TOP / "compose.yaml").read_text(encoding="utf-8"))
    return loaded


def test_valid_against_the_compose_specification(compose: dict[str, Any]) -> None:
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    validator = jsonschema.Draft202012Validator(schema)
    problems = [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(compose)]
    assert problems == []


@pytest.mark.parametrize(
    ("broken", "where"),
    [
        pytest.param({"services": {"redis": {"image": 7}}}, "services/redis/image", id="image-not-a-string"),
        pytest.param(
            {"services": {"redis": {"restart": ["always"]}}}, "services/redis/restart", id="restart"
        ),
        pytest.param(
            {"services": {"w": {"volumes": [{"source": "a"}]}}},
            "services/w/volumes/0",
            id="mount-without-type",
        ),
        pytest.param({"services": {"w": {"bulid": "."}}}, "services/w", id="typo-in-a-key"),
        pytest.param({"volumes": {"data": {"driver": 1}}}, "volumes/data/driver", id="volume-driver"),
    ],
)
def test_the_schema_catches_mistakes(broken: dict[str, Any], where: str) -> None:
    """The vendored schema is the real one: it refuses what `docker compose config` refuses."""
    validator = jsonschema.Draft202012Validator(json.loads(SCHEMA.read_text(encoding="utf-8")))
    assert where in ["/".join(map(str, e.absolute_path)) for e in validator.iter_errors(broken)]


def test_redis_keeps_an_append_only_file_on_a_volume(compose: dict[str, Any]) -> None:
    redis = compose["services"]["redis"]
    assert redis["image"].startswith("redis:")
    command = redis["command"]
    assert command[command.index("--appendonly") + 1] == "yes"
    volume, _, target = redis["volumes"][0].partition(":")
    assert target == "/data" and volume in compose["volumes"]
    assert redis["healthcheck"]["test"] == ["CMD", "redis-cli", "ping"]


def test_redis_wants_a_password_and_every_service_gives_it(compose: dict[str, Any]) -> None:
    """One Redis for several machines is reachable from the network: no service talks to it without AUTH."""
    redis = compose["services"]["redis"]
    password = redis["command"][redis["command"].index("--requirepass") + 1]
    assert password.startswith("${IB_REDIS_PASSWORD:?")
    assert redis["environment"]["REDISCLI_AUTH"].startswith("${IB_REDIS_PASSWORD:?")  # the health check
    for name in ("worker", "worker-2", "bot"):
        url = compose["services"][name]["environment"]["IB_REDIS_URL"]
        assert url.startswith("redis://:${IB_REDIS_PASSWORD:?") and url.endswith("@redis:6379/0"), name


def test_two_workers_have_their_own_repository_and_worker_id(compose: dict[str, Any]) -> None:
    one, two = compose["services"]["worker"], compose["services"]["worker-2"]
    assert one["command"] == two["command"] == ["ib", "worker", "--verbose"]
    assert one["environment"]["IB_WORKER_ID"] != two["environment"]["IB_WORKER_ID"]
    assert one["working_dir"] != two["working_dir"] and two["working_dir"].startswith("${IB_REPO_2:?")
    assert two["profiles"] == ["second-worker"]
    assert one["volumes"][1] != two["volumes"][1]  # Claude Code's home: one per worker


def test_worker_mounts_the_repository_where_it_is_on_the_host(compose: dict[str, Any]) -> None:
    worker = compose["services"]["worker"]
    assert worker["command"][:2] == ["ib", "worker"]
    [mount] = [v for v in worker["volumes"] if isinstance(v, dict) and v["type"] == "bind"]
    assert mount["source"] == mount["target"] == worker["working_dir"] == worker["environment"]["IB_ROOT"]
    assert mount["source"].startswith("${IB_REPO:?")
    assert worker["depends_on"]["redis"]["condition"] == "service_healthy"


@pytest.mark.parametrize("service", ["worker", "worker-2", "bot"])
def test_services_reach_the_bus_and_read_the_env_file(compose: dict[str, Any], service: str) -> None:
    spec = compose["services"][service]
    assert "@redis:6379/0" in spec["environment"]["IB_REDIS_URL"]
    assert spec["env_file"] == [{"path": ".env", "required": False}]
    assert spec["build"]["context"] == "." and spec["init"] is True


def test_bot_runs_ib_bot_when_its_profile_is_on(compose: dict[str, Any]) -> None:
    bot = compose["services"]["bot"]
    assert bot["command"] == ["ib", "bot"]
    assert bot["profiles"] == ["bot"]


def test_every_ib_variable_is_a_setting(compose: dict[str, Any]) -> None:
    """A typo in an IB_* name would be ignored silently by the settings: catch it here."""
    text = (TOP / "compose.yaml").read_text(encoding="utf-8")
    named = {m for spec in compose["services"].values() for m in spec.get("environment", {})}
    named |= set(re.findall(r"\$\{(IB_\w+?)(?::?[-?][^}]*)?\}", text))
    own = {"IB_REPO", "IB_REPO_2", "IB_REDIS_PORT", "IB_REDIS_BIND", "IB_REDIS_PASSWORD", "IB_UID", "IB_GID"}
    settings = {f"IB_{name.upper()}" for name in Settings.model_fields}
    assert {n for n in named if n.startswith("IB_")} - own <= settings


def test_image_has_tmux_git_and_ittybus() -> None:
    dockerfile = (TOP / "Dockerfile").read_text(encoding="utf-8")
    assert dockerfile.splitlines()[1] == "FROM python:3.11-slim"
    install = re.search(r"apt-get install -y --no-install-recommends ([^\\\n]+)", dockerfile)
    assert install is not None and {"tmux", "git"} <= set(install.group(1).split())
    assert "pip install --no-cache-dir ." in dockerfile
    ignored = (TOP / ".dockerignore").read_text(encoding="utf-8").split()
    assert {".git", ".venv", ".env", ".ib"} <= set(ignored)


def test_the_image_installs_the_claude_code_the_suite_tests() -> None:
    """The Dockerfile pins Claude Code to the version whose panes and dialogs the suite reads, so an image
    built later cannot bring a CLI whose screens nobody has checked."""
    from tests.fake_anthropic.client import CLAUDE_CODE_VERSION

    dockerfile = (TOP / "Dockerfile").read_text(encoding="utf-8")
    pinned = re.search(r"^ARG CLAUDE_CODE_PACKAGE=@anthropic-ai/claude-code@(\S+)$", dockerfile, re.MULTILINE)
    assert pinned is not None, "the Dockerfile's CLAUDE_CODE_PACKAGE names no version"
    assert pinned.group(1) == CLAUDE_CODE_VERSION


def test_the_image_runs_as_a_user_with_the_repositorys_uid(compose: dict[str, Any]) -> None:
    """Root only installs: the worker, its agents and their git commands run as `ittybus`, whose uid and gid
    compose passes from IB_UID / IB_GID (the owner of the repository on the host); Claude Code's home is
    that user's."""
    dockerfile = (TOP / "Dockerfile").read_text(encoding="utf-8")
    lines = dockerfile.splitlines()
    users = [i for i, line in enumerate(lines) if line.startswith("USER ")]
    assert users and lines[users[-1]] == "USER ittybus"
    assert not [line for line in lines[users[-1] :] if line.startswith("RUN ")], "a RUN after USER"
    assert re.search(r'useradd --uid "\$IB_UID" --gid "\$IB_GID" .* ittybus\b', dockerfile)
    args = dict(re.findall(r"^ARG (IB_[UG]ID)=(\d+)$", dockerfile, re.MULTILINE))
    for name in ("worker", "worker-2", "bot"):
        build = compose["services"][name]["build"]
        assert build["args"] == {key: f"${{{key}:-{value}}}" for key, value in args.items()}, name
    for name in ("worker", "worker-2"):
        homes = [v for v in compose["services"][name]["volumes"] if isinstance(v, str)]
        assert [v.partition(":")[2].split()[0] for v in homes] == ["/home/ittybus/.claude"], name


def entrypoint() -> list[str]:
    dockerfile = (TOP / "Dockerfile").read_text(encoding="utf-8")
    [line] = [line for line in dockerfile.splitlines() if line.startswith("ENTRYPOINT ")]
    command: list[str] = json.loads(line.removeprefix("ENTRYPOINT "))
    return command


def test_git_in_the_image_trusts_the_mounted_repository_and_no_other(tmp_path: Path) -> None:
    """The ENTRYPOINT line run for real (as root, like the suite): a repository owned by another uid is
    refused by git until the entry point names it (IB_ROOT) in the user's git config; a second one by the
    same owner stays refused; a restart does not add the line twice."""
    assert "safe.directory '*'" not in (TOP / "Dockerfile").read_text(encoding="utf-8")
    home, mounted, other = tmp_path / "home", tmp_path / "mounted", tmp_path / "other"
    home.mkdir()
    env = {"HOME": str(home), "PATH": os.environ["PATH"], "GIT_CONFIG_NOSYSTEM": "1", "LC_ALL": "C"}
    for repo in (mounted, other):
        subprocess.run(["git", "init", "-q", str(repo)], check=True, env=env)
        for folder, _dirs, files in os.walk(repo):
            for name in [folder, *(os.path.join(folder, f) for f in files)]:
                os.chown(name, 4242, 4242)  # the host user's files, as the container sees them

    def git_status(repo: Path, through_entrypoint: bool) -> subprocess.CompletedProcess[str]:
        command = ["git", "-C", str(repo), "status", "--short"]
        if through_entrypoint:
            command = [*entrypoint(), *command]
        run_env = {**env, "IB_ROOT": str(mounted)}
        return subprocess.run(command, env=run_env, capture_output=True, text=True, timeout=30, check=False)

    refused = git_status(mounted, through_entrypoint=False)
    assert refused.returncode != 0 and "dubious ownership" in refused.stderr
    assert git_status(mounted, through_entrypoint=True).returncode == 0
    assert git_status(mounted, through_entrypoint=True).returncode == 0  # the container restarted
    still = git_status(other, through_entrypoint=True)
    assert still.returncode != 0 and "dubious ownership" in still.stderr
    trusted = subprocess.run(
        ["git", "config", "--global", "--get-all", "safe.directory"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert trusted.stdout.splitlines() == [str(mounted)]
