"""Where the bot's token may sit: the pure decision (the git facts come from tests/integration)."""

from __future__ import annotations

import pytest

from bus.settings.secret_file import exposure

CASES = {
    "ignored-plain-file": (False, True, None, None),
    "tracked": (True, True, None, "which git tracks: run `git rm --cached .env`"),
    "untracked-not-ignored": (False, False, None, "which `git add -A` would commit"),
    "link-into-repo": (False, True, "/r/config/bot.env", "a link to /r/config/bot.env inside the repository"),
}


@pytest.mark.parametrize(("tracked", "ignored", "link", "says"), CASES.values(), ids=CASES.keys())
def test_exposure(tracked: bool, ignored: bool, link: str | None, says: str | None) -> None:
    problem = exposure("/r/.env", tracked, ignored, link)
    if says is None:
        assert problem is None
    else:
        assert problem is not None and says in problem and "\n" not in problem
        assert problem.startswith("IB_TELEGRAM_TOKEN is in /r/.env")
