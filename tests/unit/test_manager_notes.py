"""The manager note the Stop hook writes by hand (the hook cannot load pydantic) is the `send` command
the worker decodes, on the field bus.commands.worker_rpc reads."""

from __future__ import annotations

from bus.commands import worker_rpc
from bus.commands.worker_commands import Send
from bus.commands.worker_rpc import Received, decode_command
from worker.hooks.manager_notes import COMMAND_FIELD, note_command


def test_the_note_decodes_as_a_send_command() -> None:
    found = decode_command({COMMAND_FIELD: note_command("boss", 'done "quoted" ünï', "kid")})
    assert isinstance(found, Received)
    sent = Send(agent="boss", text='done "quoted" ünï', sender="kid")
    assert (found.sender, found.command) == ("kid", sent)


def test_each_note_has_its_own_id() -> None:
    first, second = (decode_command({COMMAND_FIELD: note_command("b", "x", "k")}) for _ in range(2))
    assert isinstance(first, Received) and isinstance(second, Received)
    assert first.id != second.id


def test_the_note_goes_on_the_field_commands_are_read_from() -> None:
    assert COMMAND_FIELD == worker_rpc.COMMAND_FIELD
