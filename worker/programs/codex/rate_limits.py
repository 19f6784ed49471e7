"""The plan's usage limit as Codex CLI's rollout records it. Each model request leaves an `event_msg` of
type `token_count` whose `rate_limits` hold the API's `x-codex-primary-*` / `x-codex-secondary-*` headers:
`used_percent`, `window_minutes` and `resets_at` (epoch seconds, from `x-codex-primary-reset-at`). Pure.

0.169.0 takes the reset from that header and from the error's `resets_at`; it ignores the
`resets_in_seconds` and `…-reset-after-seconds` the API sends beside them (then its screen says only "try
again later" and the rollout's `resets_at` is null). tests/fixtures/codex-0.169.0/rollout-usage-limit.jsonl.
"""

from __future__ import annotations

from bus.usage_limits import RecordedLimit, reset_from_header, window_of_minutes

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

FULL = 100.0  # used_percent of a window that ran out


def recorded_limit(entries: Iterable[Mapping[str, object]]) -> RecordedLimit | None:
    """The window that ran out in the rollout's last turn (its entries after the last `task_started`) and
    its reset; the later one when both ran out; None when no window of that turn is used up with a reset."""
    found: RecordedLimit | None = None
    for entry in entries:
        payload = entry.get("payload")
        if entry.get("type") != "event_msg" or not isinstance(payload, dict):
            continue
        if payload.get("type") == "task_started":
            found = None
        elif payload.get("type") == "token_count":
            found = _used_up(payload.get("rate_limits")) or found
    return found


def _used_up(rate_limits: object) -> RecordedLimit | None:
    windows = [rate_limits.get(k) for k in ("primary", "secondary")] if isinstance(rate_limits, dict) else []
    found = [
        RecordedLimit(at, window_of_minutes(w.get("window_minutes")))
        for w in windows
        if isinstance(w, dict)
        and _percent(w.get("used_percent")) >= FULL
        and (at := reset_from_header(w.get("resets_at"))) is not None
    ]
    return max(found, key=lambda limit: limit.reset_at) if found else None


def _percent(value: object) -> float:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0.0
