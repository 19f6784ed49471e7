"""The bus package's exceptions: one base, a few kinds, messages that name the value and the fix."""

from __future__ import annotations


class BusError(Exception):
    """Base of every error raised by the bus package."""


class ConfigError(BusError):
    """A setting has a bad value; the message names the setting."""


class BusUnavailable(BusError):
    """Redis cannot be reached (down, refused, timed out)."""


class NotReplicated(BusUnavailable):
    """Redis took the write but no replica confirmed it in time (`WAIT`): a failover now could lose it."""


class InvalidInput(BusError):
    """Something a person typed is not acceptable (bad id, empty message, too large, ...)."""


class NotFound(BusError):
    """The thing named does not exist on the bus."""


class Conflict(BusError):
    """The operation contradicts the current state (already claimed, already done, ...)."""


class BadRecord(BusError):
    """A stored record (or a change to one) has a field that does not fit; the message names the field."""
