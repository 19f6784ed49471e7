"""Claude Code's permission modes, as ittybus names them in `IB_PERMISSION_MODE`, the per-role settings and
`ib new-agent --permission-mode`: the values Claude Code 2.1.332 takes in `permissions.defaultMode`.
"""

from __future__ import annotations

PERMISSION_MODES = ("acceptEdits", "default", "manual", "plan", "auto", "dontAsk", "bypassPermissions")
"""`manual` is Claude Code's newer name for `default` (its settings take both)."""

DEFAULT_PERMISSION_MODE = "acceptEdits"
"""People answer from a phone: edits inside the sandboxed worktree and sandboxed commands run unasked, and
what would leave the sandbox asks. Not `auto`: behind any ANTHROPIC_BASE_URL its check cannot run and it
draws dialogs of its own."""

BYPASS = "bypassPermissions"


def permission_mode(value: str) -> str:
    """The mode `value` names (case does not matter), spelled as Claude Code spells it; ValueError naming
    the allowed values for anything else (the caller names the setting or option and the value)."""
    for mode in PERMISSION_MODES:
        if value.strip().lower() == mode.lower():
            return mode
    raise ValueError(f"must be one of {', '.join(PERMISSION_MODES)}")
