"""The manager note the Stop hook writes (through the one command encoder, without pydantic) is the `send`
command the worker decodes."""

from __future__ import annotations

from bus.commands.command_wire import COMMAND_FIELD
from bus.commands.worker_commands import Send
from bus.commands.worker_rpc import Received, decode_command
from worker.hooks.manager_notes import note_command


def test_the_note_decodes_as_a_send_command() -> None:
    found = decode_command({COMMAND_FIELD: note_command("boss", 'done "quoted" ünï', "kid")})
    assert isinstance(found, Received)
    sent = Send(agent="boss", text='done "quoted" ünï', sender="kid")
    assert (found.sender, found.command) == ("kid", sent)


def test_each_note_has_its_own_id() -> None:
    first, second = (decode_command({COMMAND_FIELD: note_command("b", "x", "k")}) for _ in range(2))
    assert isinstance(first, Received) and isinstance(second, Received)
    assert first.id != second.id
