"""`ib hook codex`: a Codex CLI agent's hooks.json command. The payload (on stdin) is read by Codex's own
reader (worker.programs.codex.signals); a dialog or a change of state goes out as `ib hook event`
publishes Claude Code's, a turn's end as `ib hook stop` does, once per Codex turn id (its notify tells the
same end). Runs on the light client and never fails the session: whatever goes wrong, exit 0.
"""

from __future__ import annotations

from worker.hooks.payload_hook import run_payload_hook

TYPE_CHECKING = False  # typing costs milliseconds on the hooks' path; the checker still sees the types
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from worker.programs.codex.signals import Reading


def handle(payload: dict[str, object], agent_id: str, cwd: str) -> None:
    from worker.programs.codex.signals import read_hook

    reading = read_hook(payload, agent_id)
    if payload.get("hook_event_name") == "SessionStart":
        from worker.hooks.transcript_record import record_transcript

        record_transcript(payload, agent_id, cwd)  # its session log, read by the worker's tail
    if reading is None or not (reading.state or reading.event_type):
        return
    if reading.ends_turn:
        end_turn(payload, reading, agent_id, cwd)
        return
    from worker.hooks.agent_event import handle_outcome
    from worker.hooks.payloads import Outcome

    found = Outcome(reading.state, reading.event_type, reading.message, reading.data, reading.prompt)
    handle_outcome(payload, agent_id, cwd, found)


def end_turn(payload: Mapping[str, object], reading: Reading, agent_id: str, cwd: str) -> None:
    """The turn's end through the Stop hook's path (state, event, the task finished, the manager told),
    keyed by the Codex turn id so Stop and notify publish it once. The Stop hook names Codex's session log
    (notify does not), read for the turn's tokens as Codex writes it."""
    from worker.hooks import stop

    last = payload.get("last_assistant_message", payload.get("last-assistant-message"))
    stop_payload: dict[str, object] = {
        "hook_event_name": "Stop",
        "session_id": str(payload.get("session_id") or payload.get("thread-id") or ""),
        "turn_id": reading.turn,
        "last_assistant_message": last if isinstance(last, str) else "",
        "program": "codex",
    }
    if isinstance(payload.get("transcript_path"), str) and payload["transcript_path"]:
        stop_payload["transcript_path"] = payload["transcript_path"]
    stop.handle(stop_payload, agent_id, cwd)


def main(argv: Sequence[str]) -> int:
    return run_payload_hook("codex", handle)
