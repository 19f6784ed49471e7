"""`ib hook gemini` (a Gemini CLI agent's BeforeAgent, AfterAgent, BeforeTool, AfterTool, Notification and
SessionEnd hooks): the agent's state and the events a person needs, from Gemini CLI's own signal.

AfterAgent ends a turn as Claude Code's Stop does, through the same code (worker.hooks.stop: complete or
waiting once per turn, the manager told, the task finished), unless the chat log shows that an API error
ended it: then it is told as Claude Code's StopFailure is (`error`, or `limited` for a used-up quota,
parked until its reset: worker.hooks.agent_event); every other event is read by
worker/hooks/gemini_payloads.py and stored and published as Claude Code's hook events are
(worker.hooks.agent_event.apply: a dialog recorded for `ib approve`, repeats dropped, one `stopped` for
the three SessionEnds of one exit). Prints nothing (Gemini CLI reads a hook's stdout as its decision) and
never fails the session: whatever goes wrong, exit 0.
"""

from __future__ import annotations

import time

from worker.hooks.payload_hook import run_payload_hook

TYPE_CHECKING = False  # typing costs milliseconds on the hooks' path; the checker still sees the types
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence


CHAT_TAIL = 1 << 20  # bytes of the chat log's end read for the turn's answer: its last messages
NO_REPLY = "[no response text]"  # AfterAgent's `prompt_response` for a turn with no answer (an API error)
ERROR_WAIT = 2.0  # seconds the chat log is read again for the error of a turn with no answer


def stop_payload(payload: Mapping[str, object], answer: str = "") -> dict[str, object]:
    """AfterAgent as the Stop hook's payload: the turn's reply is `answer`, its last message as the chat log
    keeps it, else what `prompt_response` holds; the transcript is the chat log (read for the tokens as
    Gemini CLI writes it); the turn is told apart by the session and the moment it ended. Pure."""
    from worker.hooks.gemini_payloads import turn_reply

    reply = payload.get("prompt_response")
    made: dict[str, object] = {
        "hook_event_name": "AfterAgent",
        "session_id": f"{payload.get('session_id', '')}@{payload.get('timestamp', '')}",
        "last_assistant_message": answer or (turn_reply(reply) if isinstance(reply, str) else ""),
        "program": "gemini",
    }
    if isinstance(payload.get("transcript_path"), str) and payload["transcript_path"]:
        made["transcript_path"] = payload["transcript_path"]
    return made


def chat_end(path: object, wait: bool = False) -> tuple[str, str]:
    """(answer, error) of the turn the chat log at `path` ends with (worker.programs.gemini_chat.turn_end;
    ("", "") when it cannot be read): the whole answer, which AfterAgent's `prompt_response` garbles under
    a streamed answer, and the API error that ended the turn, which it leaves out. With `wait`, a log that
    shows neither yet is read again for up to ERROR_WAIT seconds (Gemini CLI writes the error as it runs
    the hook)."""
    deadline = time.monotonic() + ERROR_WAIT
    while (ended := _chat_end(path)) == ("", "") and wait and time.monotonic() < deadline:
        time.sleep(0.05)
    return ended


def _chat_end(path: object) -> tuple[str, str]:
    if not isinstance(path, str):
        return "", ""
    from worker.programs.gemini_chat import turn_end
    from worker.programs.jsonl import tail

    return turn_end(tail(path, CHAT_TAIL))


def handle(payload: Mapping[str, object], agent_id: str, cwd: str) -> None:
    if payload.get("hook_event_name") == "AfterAgent":
        answer, error = chat_end(payload.get("transcript_path"), payload.get("prompt_response") == NO_REPLY)
        if error:  # an API error ended the turn: told as Claude Code's StopFailure is
            from worker.hooks.agent_event import handle_outcome
            from worker.hooks.gemini_payloads import failed_turn

            handle_outcome(dict(payload), agent_id, cwd, failed_turn(error, agent_id))
            return
        from worker.hooks import stop

        stop.handle(stop_payload(payload, answer), agent_id, cwd)
        return
    if payload.get("hook_event_name") == "BeforeAgent":
        from worker.hooks.transcript_record import record_transcript

        record_transcript(payload, agent_id, cwd)  # its chat log, read by the worker's tail
    from worker.hooks.gemini_payloads import outcome

    found = outcome(payload, agent_id)
    if found is None:
        return
    from bus.errors import BusError, ConfigError
    from bus.events.publish import keep, open_bus
    from bus.settings.hotconf import read_hotconf
    from worker.hooks.agent_event import apply

    conf = read_hotconf(cwd=cwd)
    try:
        with open_bus(conf) as conn:
            apply(conn, conf, agent_id, dict(payload), found)
    except ConfigError:
        raise
    except BusError as e:  # Redis away: what a person must see waits in the spool (states are the pane's)
        if found.event_type not in ("state", ""):
            from bus.events.envelope import make_event

            event = make_event(
                found.event_type, found.message, sender=agent_id, agent=agent_id, data=found.data
            )
            keep(conf, event, e)


def main(argv: Sequence[str]) -> int:
    return run_payload_hook("gemini", handle)
