"""The text of the bus's Lua scripts (bus/lua/*.lua), each read once per process. Stdlib only: the hooks'
path sends scripts too (bus.events.append_once, bus.inbox.prompt_record). The scripts stay at the top of the
package, beside the rooms whose modules send them."""

from __future__ import annotations

import os

_FOLDER = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lua")  # bus/lua
_READ: dict[str, str] = {}


def lua(name: str) -> str:
    """The script `bus/lua/<name>.lua`."""
    if name not in _READ:
        with open(os.path.join(_FOLDER, f"{name}.lua"), encoding="utf-8") as f:
            _READ[name] = f.read()
    return _READ[name]
