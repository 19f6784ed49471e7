"""Which program drew a capture, told by its shape: every capture of the real CLIs in tests/fixtures is
told as its own program or not at all (then IB_DEFAULT_CLI decides), never as another one."""

from __future__ import annotations

from pathlib import Path

import pytest

from worker.programs.screen_shape import program_of_screen

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
DRAWN_BY = {"codex-0.169.0": "codex", "gemini-0.61.0": "gemini", "pane-states": "claude", "dialogs": "claude"}
CAPTURES = sorted(
    (p, program) for folder, program in DRAWN_BY.items() for p in (FIXTURES / folder).glob("*.txt")
)


@pytest.mark.parametrize(
    ("capture", "program"), CAPTURES, ids=[f"{p.parent.name}/{p.name}" for p, _ in CAPTURES]
)
def test_a_capture_is_told_as_its_own_program_or_none(capture: Path, program: str) -> None:
    assert program_of_screen(capture.read_text(encoding="utf-8")) in (program, None)


@pytest.mark.parametrize("folder", ["codex-0.169.0", "gemini-0.61.0"])
def test_every_live_codex_and_gemini_screen_is_told(folder: str) -> None:
    untold = [
        p.name
        for p in (FIXTURES / folder).glob("*.txt")
        if program_of_screen(p.read_text(encoding="utf-8")) is None
        and not p.name.startswith(("stopped", "exited"))
    ]
    assert untold == []


def test_nothing_to_go_by_is_none() -> None:
    assert program_of_screen("") is None
    assert program_of_screen("✻ Thinking… (ctrl+c to interrupt)\n") is None
