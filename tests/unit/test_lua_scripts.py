"""Every Lua script in bus/lua is read by the module that sends it, from the rooms one folder down."""

from __future__ import annotations

from pathlib import Path

import pytest

from bus.commands import workers
from bus.inbox import attention
from bus.tasks.task_lua import SCRIPTS, script_text
from bus.wire.lua_source import lua

SCRIPT_FOLDER = Path(__file__).resolve().parents[2] / "bus" / "lua"
NAMES = sorted(path.stem for path in SCRIPT_FOLDER.glob("*.lua"))


def _read(name: str) -> str:
    """The script as its sender reads it."""
    if name.startswith("task_"):
        return script_text(name.removeprefix("task_")) if name != "task_prelude" else script_text(SCRIPTS[0])
    if name.startswith("attention_"):
        return attention._script(name.removeprefix("attention_"))
    if name.startswith("worker_"):
        return workers._script(name)
    return lua(name)


@pytest.mark.parametrize("name", NAMES, ids=NAMES)
def test_its_sender_reads_the_script(name: str) -> None:
    assert (SCRIPT_FOLDER / f"{name}.lua").read_text(encoding="utf-8") in _read(name)
