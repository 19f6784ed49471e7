"""Every `IB_*` setting with empty, negative, huge, non-numeric, path-like and unicode values: the hot
paths' reader (`ib notify`, the hooks) refuses exactly what the settings class (`ib list`, the worker)
refuses, each naming the setting."""

from __future__ import annotations

import os

import pytest

from bus.errors import ConfigError
from bus.settings import defaults
from bus.settings.hotconf import read_hotconf
from bus.settings.settings import Settings, load_settings

SETTINGS = sorted(defaults.ENV_PREFIX + name.upper() for name in Settings.model_fields)
VALUES = {
    "empty": "",
    "negative": "-1",
    "zero": "0",
    "huge": "9" * 30,
    "non-numeric": "ten",
    "infinite": "inf",
    "path-up": "../x",
    "slash": "a/b",
    "root": "/",
    "unicode": "é",
    "unicode-digits": "١٢",
    "newline": "a\nb",
}


def _refusal(run: object) -> str | None:
    try:
        run()  # type: ignore[operator]
    except ConfigError as e:
        return str(e)
    return None


@pytest.mark.parametrize("value", VALUES.values(), ids=VALUES.keys())
@pytest.mark.parametrize("setting", SETTINGS)
def test_the_hot_reader_and_the_settings_refuse_the_same(
    setting: str, value: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in [n for n in os.environ if n.startswith(defaults.ENV_PREFIX)]:
        monkeypatch.delenv(name)
    monkeypatch.setenv(setting, value)
    hot = _refusal(lambda: read_hotconf(cwd="/"))
    full = _refusal(lambda: load_settings(cwd="/"))
    assert (hot is None) == (full is None), (hot, full)
    for said in (hot, full):
        assert said is None or (setting in said and "\n" not in said.replace("\\n", ""))
