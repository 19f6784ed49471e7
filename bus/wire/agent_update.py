"""The one command that writes some fields of an agent's record only while the record is whole
(bus/lua/agent_update.lua): for redis-py (`execute_command`) and the hooks' light connection alike. A write
after the agent's removal would leave a ghost record of those few fields."""

from __future__ import annotations

from collections.abc import Mapping

from bus.wire.lua_source import lua

ID_FIELD = "id"  # held by every saved agent record (bus.stores.agent_store.Agent); a reservation has none


def update_if_whole(key: str, fields: Mapping[str, str]) -> tuple[str | int, ...]:
    """EVAL of the script: its reply is 1 when written, 0 when the agent is gone (nothing written)."""
    return (
        "EVAL",
        lua("agent_update"),
        1,
        key,
        ID_FIELD,
        *[part for pair in fields.items() for part in pair],
    )
