"""The checks of every `IB_*` value that has a rule, light enough for the hooks and `ib notify`.

`bus.settings.settings.Settings` parses numbers with `number` too, and a test runs both over a table of bad
values, so `ib notify` refuses exactly what `ib list` refuses, with the same message. Pure.
"""

from __future__ import annotations

import math

from bus.settings import defaults
from bus.settings.permission_modes import permission_mode
from bus.wire.names import name_problem, worker_id_problem

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

# setting: (whole number?, least, most, least allowed itself?)
NUMBERS: dict[str, tuple[bool, float, float, bool]] = {
    "IB_EVENTS_MAXLEN": (True, 100, math.inf, True),
    "IB_CONNECT_TIMEOUT": (False, 0, 30, False),
    "IB_REDIS_WAIT_REPLICAS": (True, 0, 100, True),
    "IB_REDIS_WAIT_MS": (True, 1, 60_000, True),
    "IB_MAX_MESSAGE_BYTES": (True, 1024, math.inf, True),
    "IB_LISTEN_TIMEOUT": (False, 0, math.inf, False),
    "IB_LISTEN_BACKLOG": (True, 0, math.inf, True),
    "IB_HEARTBEAT_TTL": (True, 2, 3600, True),
    "IB_PANE_INTERVAL": (False, 0, 60, False),
    "IB_SEND_DELAY": (False, 0, 5, True),
    "IB_TASK_TEST_TIMEOUT": (False, 0, math.inf, False),
    "IB_SCHEDULE_MIN_INTERVAL": (False, 60, math.inf, True),
    "IB_PLAN_TIMEOUT": (False, 0, math.inf, False),
    "IB_PLAN_MAX_TASKS": (True, 1, 1000, True),
    "IB_STATUS_MAX_MESSAGES": (True, 1, 1000, True),
    "IB_STATUS_DEBOUNCE": (False, 0, 300, True),
    "IB_TELEGRAM_TIME_SCALE": (False, 0, math.inf, False),
    "IB_TELEGRAM_CHAT_ID": (True, -math.inf, math.inf, True),
    "IB_EMBEDDED_PORT": (True, 1024, 65535, True),
    "IB_WEB_PORT": (True, 1024, 65535, True),
    "IB_ATTENTION_DM_AFTER": (False, 0, math.inf, True),
    "IB_ATTENTION_CHANNELS_AFTER": (False, 0, math.inf, True),
    "IB_ATTENTION_REPEAT": (False, 0, math.inf, True),
    "IB_RUNAWAY_REPEATS": (True, 2, 1000, True),
    "IB_RUNAWAY_QUIET_MINUTES": (False, 0, math.inf, False),
    "IB_RUNAWAY_TOKENS_PER_MINUTE": (True, 1, math.inf, True),
}
PRIVILEGED_PORTS = 1024
PERMISSION_MODE_SETTINGS = frozenset(
    {"IB_PERMISSION_MODE", "IB_MANAGER_PERMISSION_MODE", "IB_WORKER_PERMISSION_MODE"}
)
OVERLAP_MODES = ("hold", "warn", "ignore")
# never shown back in a refusal: they hold passwords and tokens
SECRETS = frozenset({"IB_TELEGRAM_TOKEN", "IB_ATTENTION_CHANNELS"})
# what pydantic reads as a boolean, in any case
BOOLEANS = frozenset({"0", "off", "f", "false", "n", "no", "1", "on", "t", "true", "y", "yes"})


def number(raw: str, integer: bool) -> int | float:
    """A setting's number: plain ASCII digits, a sign, and for decimals a point and an exponent; finite.
    Raises ValueError saying what is expected."""
    text = raw.strip()
    body = text.removeprefix("-").removeprefix("+")
    allowed = "0123456789" if integer else "0123456789.eE+-"
    if not body or not text.isascii() or any(c not in allowed for c in body) or not body[0].isdigit():
        raise ValueError("must be a whole number" if integer else "must be a number")
    value = int(text) if integer else float(text)
    if not math.isfinite(value):
        raise ValueError("must be a finite number")
    return value


def value_problem(name: str, raw: str) -> str | None:
    """What is wrong with `raw` as the value of setting `name`, or None (also for settings without a rule)."""
    if name in ("IB_EMBEDDED_PORT", "IB_WEB_PORT"):
        return _port_problem(raw)
    if name in NUMBERS:
        return _number_problem(raw, *NUMBERS[name])
    if name == "IB_NAMESPACE":
        return defaults.namespace_problem(raw)
    if name == "IB_WORKER_ID":
        return worker_id_problem(raw)
    if name == "IB_LISTENER_NAME":
        return name_problem("listener name", raw)
    return _other_problem(name, raw)


def _other_problem(name: str, raw: str) -> str | None:
    if name == "IB_AGENT_COMMAND" and not raw:
        return "must not be empty"
    if name in ("IB_STATUS_NODE_AUTO", "IB_PUSH_TO_SESSION") and raw.lower() not in BOOLEANS:
        return "must be true or false (or 1/0, yes/no, on/off)"
    if name in _TEXT_RULES:
        return _TEXT_RULES[name](raw)
    if name in PERMISSION_MODE_SETTINGS and (raw or name == "IB_PERMISSION_MODE"):  # a role's may be empty
        return _mode_problem(permission_mode, raw)
    if name == "IB_TELEGRAM_ALLOWED_USERS":
        try:
            user_ids(raw)
        except ValueError:
            return "must be comma-separated numeric user ids"
    return None


def overlap_mode(value: str) -> str:
    """IB_OVERLAP: what a claim does with a task whose files overlap a task in flight
    (bus.tasks.task_holds)."""
    mode = value.strip().lower() if isinstance(value, str) else ""
    if mode not in OVERLAP_MODES:
        raise ValueError(f"bad overlap mode {value!r}: use one of {', '.join(OVERLAP_MODES)}")
    return mode


def _overlap_problem(raw: str) -> str | None:
    return _mode_problem(overlap_mode, raw)


def _mode_problem(check: Callable[[str], str], raw: str) -> str | None:
    try:
        check(raw)
    except ValueError as e:
        return str(e)
    return None


def agent_env_problem(raw: str) -> str | None:
    names = [p.strip() for p in raw.split(",") if p.strip()]
    bad = [n for n in names if not n.isidentifier() or n.startswith(defaults.ENV_PREFIX)]
    return f"must be comma-separated variable names, none of them IB_*; got {bad[0]!r}" if bad else None


def _program_problem(raw: str) -> str | None:
    if raw.strip() in ("", *defaults.AGENT_PROGRAMS):
        return None
    return f"must be one of {', '.join(defaults.AGENT_PROGRAMS)} (empty: {defaults.AGENT_PROGRAMS[0]})"


def channel_urls(raw: str) -> list[str]:
    """IB_ATTENTION_CHANNELS: its URLs, separated by spaces or commas."""
    return raw.replace(",", " ").split()


def _channels_problem(raw: str) -> str | None:
    """A channel that is no URL at all (what apprise makes of a URL, the bot says when it starts)."""
    for number, url in enumerate(channel_urls(raw), start=1):
        scheme, found, rest = url.partition("://")
        if not (found and rest and scheme[:1].isalpha() and scheme.isascii() and scheme.isalnum()):
            return (
                f"channel {number} is not a URL: use apprise URLs (SCHEME://..., e.g. "
                "ntfy://ntfy.sh/my-topic or mailtos://user:pass@example.com), separated by spaces or commas"
            )
    return None


def user_ids(raw: str) -> list[int]:
    """Comma-separated Telegram user ids; ValueError for anything else."""
    return [int(number(p, integer=True)) for p in raw.split(",") if p.strip()]


def _port_problem(raw: str) -> str | None:
    """A TCP port a server run as the person can listen on."""
    problem = _number_problem(raw, *NUMBERS["IB_EMBEDDED_PORT"])
    if problem and problem.startswith("must be at least"):
        return f"must be a port from {PRIVILEGED_PORTS} to 65535: lower ones are privileged (root only)"
    if problem and problem.startswith("must be at most"):
        return "must be a port from 1024 to 65535"
    return problem


def _number_problem(raw: str, integer: bool, least: float, most: float, inclusive: bool) -> str | None:
    try:
        value = number(raw, integer)
    except ValueError as e:
        return str(e)
    if value < least or (value == least and not inclusive):
        return f"must be {'at least' if inclusive else 'more than'} {least:g}"
    if value > most:
        return f"must be at most {most:g}"
    return None


def check(values: Mapping[str, str]) -> None:
    """Raise ValueError naming the first setting in `values` whose value breaks its rule."""
    for name in sorted(values):
        found = value_problem(name, values[name])
        if found:
            shown = "" if name in SECRETS else f" (got {values[name]!r})"
            raise ValueError(f"{name}: {found}{shown}")


def _prices_problem(raw: str) -> str | None:
    from bus.costs.prices import parse_prices

    try:
        parse_prices(raw)
    except ValueError as e:
        return str(e)
    return None


def _budget_problem(raw: str) -> str | None:
    from bus.costs.budgets import parse_amount

    try:
        parse_amount(raw)
    except ValueError as e:
        return str(e)
    return None


_TEXT_RULES: dict[str, Callable[[str], str | None]] = {
    "IB_AGENT_ENV": agent_env_problem,
    "IB_PRICES": _prices_problem,
    "IB_OVERLAP": _overlap_problem,
    "IB_DAY_BUDGET": lambda raw: _budget_problem(raw) if raw.strip() else None,
    "IB_DEFAULT_CLI": _program_problem,
    "IB_ATTENTION_CHANNELS": _channels_problem,
}
