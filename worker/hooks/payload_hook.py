"""How a hook whose payload comes on stdin runs: read the JSON, find the agent (IB_AGENT_ID, else the
worktree the payload's cwd lies in), let the program read the payload into its outcome
(worker.programs.hook_outcome), and act on it, whichever program sent it: a turn's end through the Stop
path (worker.hooks.stop), any other outcome through worker.hooks.agent_event. Never fails the agent's
session: a broken payload is ignored, any other trouble is reported (worker.hooks.trouble) and the hook
still exits 0. Stdlib and fastjson only: it runs on the hooks' path.
"""

from __future__ import annotations

import os
import sys

from bus.wire import fastjson

TYPE_CHECKING = False  # typing costs milliseconds on the hooks' path; the checker still sees the types
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from worker.programs.hook_outcome import Outcome

    Read = Callable[[Mapping[str, object], str], Outcome | None]


def run_payload_hook(hook: str, read: Read) -> int:
    """Read the payload on stdin, `read(payload, agent_id)` it into an outcome for an agent's, act on it;
    exit code 0."""
    try:
        raw = sys.stdin.read()
        payload = fastjson.loads(raw) if raw.strip() else {}
    except (ValueError, SystemError):  # not a hook payload (SystemError: see worker.hooks.pre_tool_use)
        return 0
    if not isinstance(payload, dict):
        return 0
    agent_id = None
    try:
        cwd = payload.get("cwd") if isinstance(payload.get("cwd"), str) else os.getcwd()
        from bus.settings.repo_paths import agent_from_path

        agent_id = os.environ.get("IB_AGENT_ID") or agent_from_path(str(cwd))
        found = read(payload, agent_id) if agent_id else None
        if agent_id and found is not None:
            act(found, agent_id, str(cwd))
    except Exception as e:  # the agent's session must go on whatever happens here; but say it
        from worker.hooks.trouble import report

        report(hook, str(e) or type(e).__name__, agent_id, os.environ.get("IB_ROOT"))
    return 0


def act(found: Outcome, agent_id: str, cwd: str) -> None:
    """Do what an outcome says: store the log it names on the agent's record when it asks for that, end
    the turn once (a `TurnEnd`), or store and publish the state and the event."""
    if found.record_log and found.log:
        from worker.hooks.transcript_record import record_transcript

        record_transcript(found.log, agent_id, cwd)
    from worker.programs.hook_outcome import TurnEnd

    if isinstance(found, TurnEnd):
        from worker.hooks.stop import end_turn

        end_turn(found, agent_id, cwd)
    elif found.state or found.event_type:
        from worker.hooks.agent_event import handle_outcome

        handle_outcome(found, agent_id, cwd)
