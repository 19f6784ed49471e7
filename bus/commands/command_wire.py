"""A worker command as it lies on its worker's `cmd:<worker>` stream: one field, `c`, holding
`{"id", "op", "args", "from"}` (the command's tag, its other fields as `args`, who sent it), the stream
trimmed to about COMMANDS_KEPT entries. The one encoder of an entry: `bus.commands.worker_rpc` sends the
models of `bus.commands.worker_commands` through it, and the Stop hook its note to a manager
(`worker.hooks.manager_notes`). Hot: stdlib only.
"""

from __future__ import annotations

from bus.wire import fastjson

TYPE_CHECKING = False  # typing costs milliseconds on the hooks' path; the checker still sees the types
if TYPE_CHECKING:
    from collections.abc import Mapping

COMMAND_FIELD = "c"
COMMANDS_KEPT = 10_000  # a worker's command stream is trimmed to about this many


def entry(command_id: str, op: str, args: Mapping[str, object], sender: str = "") -> str:
    """The JSON of one stream entry. Pure."""
    return fastjson.dumps({"id": command_id, "op": op, "args": dict(args), "from": sender})


def xadd(stream: str, body: str) -> tuple[str | int, ...]:
    """The XADD that puts an entry's JSON on a command stream, trimmed."""
    return ("XADD", stream, "MAXLEN", "~", COMMANDS_KEPT, "*", COMMAND_FIELD, body)
