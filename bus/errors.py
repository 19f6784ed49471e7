"""The bus package's exceptions: one base, a few kinds, messages that name the value and the fix."""

from __future__ import annotations


class BusError(Exception):
    """Base of every error raised by the bus package. `reason`: a word a program may act on when the
    error comes back over the worker RPC (bus.commands.worker_rpc), beside the message people read; most have
    none."""

    reason = ""


class ConfigError(BusError):
    """A setting has a bad value; the message names the setting."""


class BusUnavailable(BusError):
    """Redis cannot be reached (down, refused, timed out)."""


class FailoverUnderWay(BusUnavailable):
    """The sentinels answer, but the primary they name cannot be reached or is not a primary yet."""


class NoBusHere(BusUnavailable):
    """The repository has no ittybus: only `ib up` and `ib bus start` create one."""


class NotReplicated(BusUnavailable):
    """Redis took the write but no replica confirmed it in time (`WAIT`): a failover now could lose it."""


class InvalidInput(BusError):
    """Something a person typed is not acceptable (bad id, empty message, too large, ...)."""


class NotFound(BusError):
    """The thing named does not exist on the bus."""


class Conflict(BusError):
    """The operation contradicts the current state (already claimed, already done, ...)."""


class DialogOpen(Conflict):
    """The agent shows a dialog: typed text would answer it (or be lost); the message says what does."""

    reason = "dialog_open"


class UnmergedWork(Conflict):
    """Stopping the agent would throw away work nobody merged (commits, changed files); `--force` would."""

    reason = "unmerged"


class BadRecord(BusError):
    """A stored record (or a change to one) has a field that does not fit; the message names the field."""
