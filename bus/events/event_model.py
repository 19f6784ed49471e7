"""Typed events for consumers: the envelope of `bus.events.envelope` as a pydantic model.

Unknown fields and unknown types from newer producers are kept, never rejected.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from bus.events.envelope import ALL_TYPES, Envelope, decode


class Event(BaseModel):
    """One thing that happened. `id` is the stream entry id; `sender` is `from` on the wire."""

    model_config = ConfigDict(extra="allow", populate_by_name=True, frozen=True)

    id: str = ""
    ts: str = ""
    type: str = "unknown"
    sender: str = Field(default="unknown", alias="from")
    project: str | None = None
    agent: str | None = None
    task: str | None = None
    msg: str = ""
    data: dict[str, Any] = Field(default_factory=dict)

    @property
    def known(self) -> bool:
        """False for types this version does not know (a newer producer's)."""
        return self.type in ALL_TYPES

    @classmethod
    def from_envelope(cls, envelope: Envelope) -> Event:
        data = envelope.get("data")
        clean = dict(envelope)
        if not isinstance(data, dict):
            clean["data"] = {"value": data} if data is not None else {}
        for name in ("id", "ts", "type", "from", "msg"):
            if not isinstance(clean.get(name), str):
                clean[name] = "" if clean.get(name) is None else str(clean[name])
        for name in ("project", "agent", "task"):
            if clean.get(name) is not None and not isinstance(clean[name], str):
                clean[name] = str(clean[name])
        return cls.model_validate(clean)

    @classmethod
    def from_entry(cls, entry_id: str, raw: str | bytes | None) -> Event:
        return cls.from_envelope(decode(entry_id, raw))

    def envelope(self) -> Envelope:
        return self.model_dump(by_alias=True)
