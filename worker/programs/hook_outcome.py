"""What an agent program's hook payload means for ittybus, whichever program sent it: one `Outcome` (the
agent's new state and the event to publish: a change of state, a dialog, an error, a usage limit), or its
`TurnEnd` (complete or waiting, with the turn's last message and the log its tokens are read from). Each
program reads its own payloads into these (worker.programs.claude.signals, codex.signals, gemini.signals);
the hooks (worker.hooks) act on them and never ask which program sent one. Pure, and light enough for the
hooks' path (no typing, dataclasses or enum at run time).
"""

from __future__ import annotations

from worker.programs.stop_message import COMPLETE, turn_end

TYPE_CHECKING = False  # typing costs milliseconds on the hooks' path; the checker still sees the types
if TYPE_CHECKING:
    from collections.abc import Callable

    from bus.costs.usage import Usage

    UsageRead = Callable[[str], tuple[list[Usage], int]]

MAX_TEXT = 2000  # characters of any one text taken from a payload into an event
PERMISSION_OPTIONS = ("approve", "approve always", "deny")
"""The answers the event of a permission dialog offers, whichever program draws it."""


class Outcome:
    """What a hook payload decided. `state` ("" = keep the agent's state), the event (`event_type`, "" =
    none; "state" = only a change of state, with `message` and `data`), for a dialog its `prompt` kind
    (permission, plan, ask); the program's `turn` it belongs to ("" when the payload names none), the
    `log` the payload names (the program's transcript), `record_log` when the hooks store that log on the
    agent's record for the worker's tail (the signal that opens a session or a turn), and `reminder` when
    the signal only repeats what a hook said before (a notification: dropped when the agent's state
    already says it)."""

    __slots__ = ("data", "event_type", "log", "message", "prompt", "record_log", "reminder", "state", "turn")

    def __init__(
        self,
        state: str,
        event_type: str,
        message: str,
        data: dict[str, object],
        prompt: str = "",
        turn: str = "",
        log: str = "",
    ) -> None:
        self.state, self.event_type, self.message, self.data = state, event_type, message, data
        self.prompt, self.turn, self.log = prompt, turn, log
        self.record_log = self.reminder = False

    def __repr__(self) -> str:
        fields = (self.state, self.event_type, self.message, self.data, self.prompt, self.turn)
        return f"{type(self).__name__}{fields!r}"


class TurnEnd(Outcome):
    """The end of a turn: `state` and `event_type` are complete or waiting (the `decision` the program saw,
    else what `last_message` ends with), `last_message` the turn's last answer, whole; `turn` the
    program's id of it, else `session` names the conversation (the hooks publish one end per turn:
    worker.hooks.stop); `log` the program's transcript and `read_usage` its reader of the tokens each
    answer used there, (usages, unreadable lines)."""

    __slots__ = ("last_message", "read_usage", "session")

    def __init__(
        self,
        agent_id: str,
        last_message: str,
        read_usage: UsageRead,
        session: str = "",
        turn: str = "",
        log: str = "",
        data: dict[str, object] | None = None,
        decision: str = "",
    ) -> None:
        decision = decision or turn_end(last_message)
        said = "completed its goal" if decision == COMPLETE else "is waiting"
        told = {"last_message": last_message[-MAX_TEXT:], **(data or {})}
        super().__init__(decision, decision, f"Agent {agent_id} {said}", told, turn=turn, log=log)
        self.last_message, self.read_usage, self.session = last_message, read_usage, session


def stopped_reason(agent_id: str) -> str:
    """Why a claim fails when its agent's session ends (a hook or the pane watcher says it)."""
    return f"agent {agent_id} stopped (its session ended) while holding the task"


QUIET_REPEATS = frozenset(
    {
        ("waiting", "waiting"),
        ("waiting", "complete"),
        ("waiting", "error"),  # Claude Code's idle_prompt comes 45-60 s after any turn end: the error stands
        ("waiting", "rate_limited"),
        ("waiting", "limited"),  # the limit stands until the worker resumes the agent at its reset
        ("permission", "permission"),
    }
)
"""(outcome state, stored state) pairs where a reminder only repeats what a hook already said, or would
hide the error that ended the turn (that stands until the next turn starts)."""


def says_nothing_new(found: Outcome, previous: str) -> bool:
    """Whether `found` must be dropped, the agent being `previous`: a reminder that repeats
    (QUIET_REPEATS), a limit the agent is parked on already, or a session's end after the pane watcher saw
    the session end (it published `stopped` and gave the claims back)."""
    if found.reminder:
        return (found.state, previous) in QUIET_REPEATS
    return found.state == previous and found.state in ("limited", "stopped")
