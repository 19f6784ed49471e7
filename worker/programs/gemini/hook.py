"""Gemini CLI's hook payloads read into outcomes (worker.programs.hook_outcome), with what AfterAgent
leaves out read from the chat log: the turn's whole answer, which `prompt_response` garbles under a
streamed answer, and the API error that ended a turn, which it leaves out (then the turn is told as Claude
Code's StopFailure is: `error`, or `limited` for a used-up quota). The payloads themselves are read by
`signals` (pure).
"""

from __future__ import annotations

import time

TYPE_CHECKING = False  # typing costs milliseconds on the hooks' path; the checker still sees the types
if TYPE_CHECKING:
    from collections.abc import Mapping

    from worker.programs.hook_outcome import Outcome

CHAT_TAIL = 1 << 20  # bytes of the chat log's end read for the turn's answer: its last messages
NO_REPLY = "[no response text]"  # AfterAgent's `prompt_response` for a turn with no answer (an API error)
ERROR_WAIT = 2.0  # seconds the chat log is read again for the error of a turn with no answer


def read_hook(payload: Mapping[str, object], agent_id: str) -> Outcome | None:
    """The outcome of one of `ib hook gemini`'s payloads; None when it does not concern ittybus."""
    if payload.get("hook_event_name") == "AfterAgent":
        answer, error = chat_end(payload.get("transcript_path"), payload.get("prompt_response") == NO_REPLY)
        if error:
            from worker.programs.gemini.signals import failed_turn

            return failed_turn(error, agent_id)
        from worker.programs.gemini.signals import turn_end

        return turn_end(payload, agent_id, answer)
    from worker.programs.gemini.signals import outcome

    return outcome(payload, agent_id)


def chat_end(path: object, wait: bool = False) -> tuple[str, str]:
    """(answer, error) of the turn the chat log at `path` ends with (worker.programs.gemini.chat.turn_end;
    ("", "") when it cannot be read). With `wait`, a log that shows neither yet is read again for up to
    ERROR_WAIT seconds (Gemini CLI writes the error as it runs the hook)."""
    deadline = time.monotonic() + ERROR_WAIT
    while (ended := _chat_end(path)) == ("", "") and wait and time.monotonic() < deadline:
        time.sleep(0.05)
    return ended


def _chat_end(path: object) -> tuple[str, str]:
    if not isinstance(path, str):
        return "", ""
    from worker.programs.gemini.chat import turn_end
    from worker.programs.jsonl import tail

    return turn_end(tail(path, CHAT_TAIL))
