"""The Telegram token and git: a new user's `.env` stays out of `git status`, and the bot refuses to start
(one line, exit 1) when the token sits in a `.env` git tracks or that links to a file in the repository."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from bus.connection.embedded import Embedded
from bus.settings.secret_file import token_file_problem
from tests.cli import IbRunner, git

TOKEN_LINE = "IB_TELEGRAM_TOKEN=123456:ABCDEFsecretTAIL\n"
BOT_ENV = {"IB_TELEGRAM_CHAT_ID": "-1001", "IB_TELEGRAM_ALLOWED_USERS": "7"}


@pytest.fixture
def local(repo: Path, tmp_path: Path) -> Iterator[IbRunner]:
    """`ib` on the repository's embedded bus: the default a new user gets."""
    runner = IbRunner(repo, {"IB_SPOOL_DIR": str(tmp_path / "spool"), **BOT_ENV})
    yield runner
    Embedded(str(repo)).stop()


def _refused(done: object, *said: str) -> None:
    stderr = getattr(done, "stderr", "")
    assert getattr(done, "returncode", None) == 1, stderr
    assert len(stderr.strip().splitlines()) == 1 and "Traceback" not in stderr, stderr
    for words in said:
        assert words in stderr, stderr
    assert "ABCDEFsecretTAIL" not in stderr


def test_a_new_users_env_is_out_of_git_and_accepted(local: IbRunner, repo: Path) -> None:
    (repo / ".env").write_text(TOKEN_LINE)
    assert local.run("bus", "start").returncode == 0  # what `ib up` does first
    assert git(repo, "status", "--porcelain", "--untracked-files=all") == ""
    git(repo, "add", "-A")
    assert git(repo, "diff", "--cached", "--name-only") == ""
    assert token_file_problem(str(repo), {}) is None


def test_a_tracked_env_is_refused(local: IbRunner, repo: Path) -> None:
    (repo / ".env").write_text(TOKEN_LINE)
    git(repo, "add", ".env")
    git(repo, "commit", "-q", "-m", "settings")
    assert local.run("bus", "start").returncode == 0  # the bot needs a bus: only `ib up` or this makes one
    _refused(
        local.run("bot"), "ib bot: error: IB_TELEGRAM_TOKEN is in", "which git tracks", "git rm --cached .env"
    )
    _refused(local.run("up", "--detach"), "which git tracks")
    assert not (repo / ".ib" / "stack.json").exists()  # nothing was started


def test_an_env_linked_into_the_repository_is_refused(local: IbRunner, repo: Path) -> None:
    (repo / "config").mkdir()
    (repo / "config" / "bot.env").write_text(TOKEN_LINE)
    os.symlink("config/bot.env", repo / ".env")
    target = os.path.realpath(repo / "config" / "bot.env")
    assert local.run("bus", "start").returncode == 0
    _refused(local.run("bot"), f"a link to {target} inside the repository")


def test_an_env_linked_out_of_the_repository_is_accepted(repo: Path, tmp_path: Path) -> None:
    outside = tmp_path / "secrets.env"
    outside.write_text(TOKEN_LINE)
    os.symlink(outside, repo / ".env")
    (repo / ".git" / "info" / "exclude").write_text("/.env\n")
    assert token_file_problem(str(repo), {}) is None


def test_an_env_git_would_add_is_refused_and_the_environment_is_not_looked_at(repo: Path) -> None:
    (repo / ".env").write_text(TOKEN_LINE)
    problem = token_file_problem(str(repo), {})
    assert problem is not None and "which `git add -A` would commit" in problem
    assert token_file_problem(str(repo), {"IB_TELEGRAM_TOKEN": "1:x"}) is None


@pytest.mark.parametrize(
    ("given", "missing"),
    [
        ({}, ["IB_TELEGRAM_CHAT_ID is not set", "IB_TELEGRAM_ALLOWED_USERS is empty"]),
        ({"IB_TELEGRAM_CHAT_ID": "-1001"}, ["IB_TELEGRAM_ALLOWED_USERS is empty"]),
    ],
)
def test_up_with_only_a_token_is_refused_before_anything_starts(
    repo: Path, tmp_path: Path, given: dict[str, str], missing: list[str]
) -> None:
    """Half a Telegram setup: a bot would only crash and restart, its reason in a log nobody reads."""
    (repo / ".git" / "info" / "exclude").write_text("/.env\n")
    (repo / ".env").write_text(TOKEN_LINE)
    runner = IbRunner(repo, {"IB_SPOOL_DIR": str(tmp_path / "spool"), **given})
    try:
        _refused(runner.run("up", "--detach"), "the bot cannot start", *missing, "unset IB_TELEGRAM_TOKEN")
        assert not (repo / ".ib" / "stack.json").exists()
    finally:
        Embedded(str(repo)).stop()
