"""Claude Code retrying an API call, read from its pane ("· retrying in 10s · attempt 5/10"): the detail
of a running agent while it retries. No event: most retries recover, and StopFailure says the ones that
end the turn. Pure."""

from __future__ import annotations

import re

from worker.tmux.pane_screen import conversation_column

_RETRY = re.compile(r"retrying in (\d+)\s*s\s*·\s*attempt (\d+)/(\d+)")
_OVERLOADED = re.compile(r"\b529\b|[Oo]verloaded")
_RATE_LIMIT = re.compile(r"\b429\b|rate.?limit", re.IGNORECASE)


def retry_notice(text: str) -> dict[str, object] | None:
    """{kind, retry_in, attempt, attempts, line} from the last retry line on screen; None without one."""
    for line in reversed(conversation_column(text.splitlines())):  # not the diff panel's words
        found = _RETRY.search(line)
        if found:
            kind = (
                "rate_limit"
                if _RATE_LIMIT.search(line)
                else "overloaded"
                if _OVERLOADED.search(line)
                else "other"
            )
            return {
                "kind": kind,
                "retry_in": int(found[1]),
                "attempt": int(found[2]),
                "attempts": int(found[3]),
                "line": line.strip()[:300],
            }
    return None


def retry_detail(text: str) -> str:
    """`retrying (rate_limit) · attempt 4/10` while the pane shows a retry (the kind only when the line
    names it: the first retries say just "API error"); "" otherwise."""
    notice = retry_notice(text)
    if notice is None:
        return ""
    kind = "" if notice["kind"] == "other" else f" ({notice['kind']})"
    return f"retrying{kind} · attempt {notice['attempt']}/{notice['attempts']}"
