"""What a hook does when it could not do its job: one line on stderr and one in the agent's agent.log.

Hooks never fail the agent's session (they exit 0), so this is how a lost event or a broken setting
is still seen. Stdlib only: it runs on the hooks' path.
"""

from __future__ import annotations

import os
import sys
import time


def one_line(text: str) -> str:
    """`text` on one line: line breaks and other control characters escaped. Pure."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def report(hook: str, problem: str, agent_id: str | None = None, root: str | None = None) -> None:
    """Say `problem` on stderr and, for an agent, in `<root>/.ib/agents/<id>/agent.log`."""
    line = one_line(problem)
    try:  # noqa: SIM105 - contextlib costs the hooks milliseconds at import
        print(f"ib hook {hook}: error: {line}", file=sys.stderr)
    except OSError:
        pass  # no stderr: the log below still has it
    if not (agent_id and root):
        return
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    try:
        with open(os.path.join(root, ".ib", "agents", agent_id, "agent.log"), "a", encoding="utf-8") as log:
            log.write(f"[{stamp}] [hook {hook}] {line}\n")
    except OSError:
        pass  # nowhere to write: stderr was the last resort
