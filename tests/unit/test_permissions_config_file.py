"""The shape of `.ib/config.json`: checked whole, every wrong field named (whichever role is spawned)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bus.errors import InvalidInput
from bus.settings.defaults import AGENT_PROGRAMS
from worker.permissions.config_file import read_config, shape_problem
from worker.programs import registry

GOOD = {
    "empty": {},
    "no-roles": {"permissions": {}},
    "both": {"permissions": {"worker": {"allow": ["Bash(npm test:*)"], "deny": []}, "manager": {}}},
}
BAD: dict[str, tuple[object, str]] = {
    "null": (None, "holds a JSON null"),
    "string": ("x", "holds a JSON string"),
    "unknown-top": ({"permissions": {}, "extra": 1}, "has an unknown field extra"),
    "permissions-array": ({"permissions": []}, "has permissions as a JSON array"),
    "unknown-role": ({"permissions": {"admin": {}}}, "has an unknown field permissions.admin"),
    "role-null": ({"permissions": {"worker": None}}, "has permissions.worker as a JSON null"),
    "unknown-list": ({"permissions": {"worker": {"alow": []}}}, "unknown field permissions.worker.alow"),
    "list-object": ({"permissions": {"manager": {"deny": {}}}}, "permissions.manager.deny as a JSON object"),
    "rule-bool": (
        {"permissions": {"worker": {"allow": [True]}}},
        "permissions.worker.allow[0] as a JSON boolean",
    ),
}


@pytest.mark.parametrize("loaded", GOOD.values(), ids=GOOD.keys())
def test_a_right_shape_passes(loaded: object) -> None:
    assert shape_problem(loaded) is None


@pytest.mark.parametrize(("loaded", "says"), BAD.values(), ids=BAD.keys())
def test_a_wrong_shape_names_the_field(loaded: object, says: str) -> None:
    found = shape_problem(loaded)
    assert found is not None and says in found


def test_reading_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    assert read_config(path) == {}
    path.write_text(json.dumps({"permissions": {"worker": {"allow": "Bash(ls)"}}}))
    with pytest.raises(InvalidInput, match=r"config\.json has permissions\.worker\.allow as a JSON string"):
        read_config(path)
    path.write_text("{not json")
    with pytest.raises(InvalidInput, match="is not valid JSON"):
        read_config(path)


def test_the_settings_know_the_programs_the_registry_has() -> None:
    """IB_DEFAULT_CLI is checked against bus's names (bus imports no worker): the registry's."""
    assert registry.known() == AGENT_PROGRAMS
