"""tmux for the hooks: they run inside an agent's pane, on every tool call, and cannot load libtmux. One
`tmux -u` process on the server the pane's `$TMUX` names (`-u`: emoji and other UTF-8 intact whatever the
locale); its output, or what it printed before it failed when `check` is off. Everything else runs tmux
through `worker.tmux.server`. Hot: stdlib only.
"""

from __future__ import annotations

import subprocess

TYPE_CHECKING = False  # typing costs milliseconds on the hooks' path; the checker still sees the types
if TYPE_CHECKING:
    from collections.abc import Mapping


def tmux(args: list[str], *, timeout: float, env: Mapping[str, str] | None = None, check: bool = True) -> str:
    """Run `tmux -u ARGS`; raises CalledProcessError (with `check`) and TimeoutExpired as subprocess does."""
    done = subprocess.run(
        ["tmux", "-u", *args],
        env=None if env is None else dict(env),
        capture_output=True,
        text=True,
        encoding="utf-8",
        errors="replace",
        timeout=timeout,
        check=check,
    )
    return done.stdout
