"""Where the bot's token is kept: a `.env` that git would commit (tracked, not ignored, or a link to a file
in the repository) is refused before the bot starts, with one line saying what to do.

`exposure` is the pure decision; `token_file_problem` looks at the file and asks git.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping
from pathlib import Path

from bus.settings import defaults
from bus.settings.settings import env_file_for, env_file_values

TOKEN = defaults.ENV_PREFIX + "TELEGRAM_TOKEN"


def exposure(name: str, tracked: bool, ignored: bool, link_into_repo: str | None) -> str | None:
    """What is wrong with keeping the token in `name` (None: git would never commit it)."""
    if link_into_repo is not None:
        return (
            f"{TOKEN} is in {name}, a link to {link_into_repo} inside the repository, which git can commit: "
            "make .env a plain file (ittybus keeps /.env out of git) or set the token in the environment"
        )
    if tracked:
        return (
            f"{TOKEN} is in {name}, which git tracks: run `git rm --cached .env` (ittybus keeps /.env out "
            "of git), commit, and get a new token from @BotFather if that commit was ever pushed"
        )
    if not ignored:
        return (
            f"{TOKEN} is in {name}, which `git add -A` would commit: add /.env to .gitignore "
            "(or .git/info/exclude), or set the token in the environment"
        )
    return None


def token_file_problem(cwd: str | None = None, environ: Mapping[str, str] | None = None) -> str | None:
    """Why the bot must not start with the token where it is; None when the token is safe (set in the
    environment, or in a `.env` git ignores)."""
    env = os.environ if environ is None else environ
    if env.get(TOKEN):
        return None
    path = env_file_for(cwd, dict(env))
    if path is None or not _names_token(path):
        return None
    folder = path.parent
    top = _git(folder, "rev-parse", "--show-toplevel")
    if top.returncode != 0:
        return None  # no repository around it: nothing git could commit
    root = os.path.realpath(top.stdout.strip())
    link = None
    if path.is_symlink():
        target = os.path.realpath(path)
        link = target if os.path.commonpath([root, target]) == root else None
    tracked = _git(folder, "ls-files", "--error-unmatch", "--", path.name).returncode == 0
    ignored = _git(folder, "check-ignore", "-q", "--", path.name).returncode == 0
    return exposure(str(path), tracked, ignored, link)


def _names_token(path: Path) -> bool:
    return any(k.upper() == TOKEN and v for k, v in env_file_values(path).items())


def _git(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=False)
