"""`ib hook codex-notify JSON`: a Codex CLI agent's notify program. Codex passes `agent-turn-complete` as
the last argument after every turn of every thread; Codex's own reader (worker.programs.codex.signals)
reads the agent's own turns as their ends, published once per turn id with the Stop hook's
(worker.hooks.stop); the hidden thread that names the session ends nothing. Never fails: exit 0.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # typing costs milliseconds on the hooks' path; the checker still sees the types
if TYPE_CHECKING:
    from collections.abc import Sequence


def main(argv: Sequence[str]) -> int:
    agent_id = None
    try:
        from worker.programs.codex.signals import notify_payload, read_notify

        payload = notify_payload(argv[-1]) if argv else None
        if payload is None:
            return 0
        cwd = payload.get("cwd") if isinstance(payload.get("cwd"), str) else os.getcwd()
        from bus.settings.repo_paths import agent_from_path

        agent_id = os.environ.get("IB_AGENT_ID") or agent_from_path(str(cwd))
        found = read_notify(payload, agent_id) if agent_id else None
        if agent_id and found is not None:
            from worker.hooks.payload_hook import act

            act(found, agent_id, str(cwd))
    except Exception as e:  # the agent's session must go on whatever happens here; but say it
        from worker.hooks.trouble import report

        report("codex-notify", str(e) or type(e).__name__, agent_id, os.environ.get("IB_ROOT"))
    return 0
