"""Claude Code retrying an API call, read from its pane ("· retrying in 10s · attempt 5/10"): the retry
facts an `error` event carries while no hook can say it (StopFailure fires only once retries end). Pure."""

from __future__ import annotations

import re

_RETRY = re.compile(r"retrying in (\d+)\s*s\s*·\s*attempt (\d+)/(\d+)")
_OVERLOADED = re.compile(r"\b529\b|[Oo]verloaded")
_RATE_LIMIT = re.compile(r"\b429\b|rate.?limit", re.IGNORECASE)


def retry_notice(text: str) -> dict[str, object] | None:
    """{kind, retry_in, attempt, attempts, line} from the last retry line on screen; None without one."""
    for line in reversed(text.splitlines()):
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
