"""Telling an agent's open dialog once: the compare-and-set that the pane watcher (redis-py,
bus.inbox.prompts) and the agent's hooks (the light client, worker.hooks.agent_event) share.

Both may see one dialog at the same instant. Each reads the agent's record, decides whether the dialog it
sees is the one recorded (then it adopts that record and publishes nothing new), and otherwise records
its own with one script (bus/lua/prompt_tell.lua) that sets it only if the record is still the one it
read. The one that loses reads again and finds the winner's record: the dialog is recorded, and its
event published, once. Stdlib only: the hooks' path imports it.
"""

from __future__ import annotations

from bus.errors import BusError
from bus.wire.keys import Keys
from bus.wire.lua_source import lua

PROMPT_TTL = 86400
TRIES = 3  # read, decide, set: with two tellers the second round always settles it
TOLD_LATE = 10.0  # seconds after the pane watcher told a dialog within which a hook's telling is of it

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping


def command(
    keys: Keys, agent: str, read_id: str, how: str, fields: Mapping[str, str]
) -> tuple[str | int, ...]:
    """The EVAL that sets `fields` (`how`: "record" replaces the record, "add" adds to it) in the agent's
    record only if its id is still `read_id` ("" for none)."""
    flat = [x for pair in fields.items() for x in pair]
    prompt, questions, question = keys.prompt(agent), keys.questions, keys.question("")
    return ("EVAL", lua("prompt_tell"), 2, prompt, questions, read_id, how, question, PROMPT_TTL, *flat)


def outcome(reply: object) -> tuple[bool, str]:
    """(True when set now, the id found instead when not) from the script's reply."""
    if isinstance(reply, list) and len(reply) == 2:
        found = reply[1].decode() if isinstance(reply[1], bytes) else str(reply[1])
        return reply[0] == 1, found
    raise BusError(f"unexpected reply to the prompt script: {reply!r}")
