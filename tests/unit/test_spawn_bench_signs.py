"""bench/spawn_bench.py's input-box signs on the committed captures of each pinned CLI: the box counts once
it is drawn, not on a blank screen, a start-up dialog or a dead pane."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.spawn_bench import INPUT_BOX

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
CLAUDE = FIXTURES / "pane-states"
CODEX = FIXTURES / "codex-0.169.0"
GEMINI = FIXTURES / "gemini-0.61.0"


@pytest.mark.parametrize("width", ["w80", "w100", "w200"])
@pytest.mark.parametrize(
    ("cli", "capture", "drawn"),
    [
        ("claude", CLAUDE / "creating-cc2.1.332-blank", False),
        ("claude", CLAUDE / "permission-cc2.1.332-trust-folder", False),
        ("claude", CLAUDE / "stopped-cc2.1.332-pane-is-dead", False),
        ("claude", CLAUDE / "waiting-cc2.1.332-marker", True),
        ("claude", CLAUDE / "running-cc2.1.332-spinner", True),
        ("codex", CODEX / "stopped-quit", False),
        ("codex", CODEX / "waiting-idle-prompt", True),
        ("codex", CODEX / "running-working", True),
        ("gemini", CLAUDE / "creating-cc2.1.332-blank", False),
        ("gemini", GEMINI / "idle-startup", True),
        ("gemini", GEMINI / "working-held-stream", True),
    ],
)
def test_input_box_is_read_on_the_clis_captures(cli: str, capture: Path, drawn: bool, width: str) -> None:
    screen = capture.with_name(f"{capture.name}-{width}.txt").read_text(encoding="utf-8")
    assert INPUT_BOX[cli](screen) is drawn


def test_one_clis_box_is_not_anothers() -> None:
    codex_idle = (CODEX / "waiting-idle-prompt-w100.txt").read_text(encoding="utf-8")
    gemini_idle = (GEMINI / "idle-startup-w100.txt").read_text(encoding="utf-8")
    assert not INPUT_BOX["claude"](codex_idle)
    assert not INPUT_BOX["claude"](gemini_idle)
    assert not INPUT_BOX["gemini"](codex_idle)
