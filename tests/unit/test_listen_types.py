"""`ib listen`'s default types are one list (`bus.events.envelope.LISTEN_TYPES`); its help, the README and the
guides name exactly that list, so none of them can promise a wake-up the listener does not give."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from bus.events.envelope import ALL_TYPES, LISTEN_TYPES
from tests.cli import IB

ROOT = Path(__file__).resolve().parents[2]
SENTENCE = re.compile(r"wakes for every end of a turn and everything that\s+waits on you:(?P<types>[^.]*)\.")


def _named(text: str) -> list[str]:
    found = SENTENCE.search(text)
    assert found, "no sentence saying what `ib listen` wakes for"
    return re.findall(r"`([a-z_]+)`", found["types"]) or [t.strip() for t in found["types"].split(",")]


def test_every_default_type_is_a_known_one_and_a_dialog_wakes_the_listener() -> None:
    assert set(LISTEN_TYPES) <= set(ALL_TYPES)
    assert {"complete", "waiting", "question", "permission", "error", "limited"} <= set(LISTEN_TYPES)


@pytest.mark.parametrize("page", ["README.md", "docs/guide/bus.md", "docs/guide/listening.md"])
def test_the_pages_name_the_list(page: str) -> None:
    assert _named((ROOT / page).read_text(encoding="utf-8")) == list(LISTEN_TYPES)


def test_the_help_names_the_list() -> None:
    env = {**os.environ, "COLUMNS": "300"}
    shown = subprocess.run([IB, "listen", "--help"], capture_output=True, text=True, env=env, check=False)
    assert shown.returncode == 0, shown.stderr
    assert _named(" ".join(shown.stdout.replace("│", " ").split())) == list(LISTEN_TYPES)
