"""Budgets as values: an amount of money or tokens (`2.50$`, `400k`), how much of it is spent, and what
crossing 80 % and 100 % asks for. Pure; `bus.stores.budget_store` keeps them in Redis, the worker acts on
them.

A budget covers one agent, one task, or one day (UTC) of every agent together. Tokens are counted as
`ib cost` counts them: input, output, cache writes and cache reads.
"""

from __future__ import annotations

from bus.costs.usage import dollars, kilo_tokens
from bus.wire.record import Record

USD, TOKENS = "usd", "tokens"
WARN_AT = 0.8
"""The share of a budget that raises one `budget_warning`."""

_TOKEN_UNITS = {"": 1, "k": 1_000, "m": 1_000_000}
_MOST_USD = 1_000_000.0
_MOST_TOKENS = 1e12
FORM = "write dollars as 2.50$ (or $2.50) and tokens as 400k, 1.5M or 250000"


class Amount(Record):
    """So many dollars, or so many tokens."""

    __slots__ = ("unit", "value")
    unit: str  # USD or TOKENS
    value: float

    def __init__(self, unit: str, value: float) -> None:
        self.unit, self.value = unit, value

    def __str__(self) -> str:
        return dollars(self.value) if self.unit == USD else f"{kilo_tokens(int(self.value))} tokens"

    def plus(self, other: Amount) -> Amount:
        return Amount(self.unit, self.value + other.value)


def parse_amount(text: str) -> Amount:
    """`2.50$`, `$2.50`, `2.5usd` → dollars; `400k`, `1.5M`, `250000` → tokens. A value of 0 or less,
    a number that is no number and an unknown unit raise ValueError with one line saying what to write."""
    raw = text.strip().lower().replace(" ", "").replace("_", "")
    if raw.startswith("$") or raw.endswith("$") or raw.endswith("usd"):
        unit, number = USD, raw.removeprefix("$").removesuffix("$").removesuffix("usd")
        scale = 1.0
    else:
        body = raw
        while body and not (body[-1].isascii() and (body[-1].isdigit() or body[-1] == ".")):
            body = body[:-1]
        suffix = raw[len(body) :]
        if suffix not in _TOKEN_UNITS:
            raise ValueError(f"budget {text!r} has an unknown unit {suffix!r}: {FORM}")
        unit, number, scale = TOKENS, raw[: len(raw) - len(suffix)], float(_TOKEN_UNITS[suffix])
    value = _decimal(number)
    if value is None:
        raise ValueError(f"budget {text!r} is not a number: {FORM}")
    amount = value * scale
    if amount <= 0:
        raise ValueError(f"budget {text!r} must be more than 0 (to stop an agent, use ib kill)")
    if amount > (_MOST_USD if unit == USD else _MOST_TOKENS):
        raise ValueError(f"budget {text!r} is implausibly large: {FORM}")
    if unit == TOKENS and amount < 1:
        raise ValueError(f"budget {text!r} is under one token: {FORM}")
    return Amount(unit, round(amount) if unit == TOKENS else amount)


def _decimal(text: str) -> float | None:
    """A plain decimal number (`12`, `2.50`, `.5`, `-3`); None for anything else (no exponent, inf, nan)."""
    body = text.removeprefix("-")
    whole, dot, part = body.partition(".")
    digits = whole + part
    if not digits or not digits.isascii() or not digits.isdigit() or (dot and "." in part):
        return None
    return float(text)


class Spent(Record):
    """What a budget's scope has used: dollars and tokens."""

    __slots__ = ("tokens", "usd")
    usd: float
    tokens: int

    def __init__(self, usd: float = 0.0, tokens: int = 0) -> None:
        self.usd, self.tokens = usd, tokens

    def of(self, unit: str) -> float:
        return self.usd if unit == USD else float(self.tokens)

    def shown(self, unit: str) -> str:
        return str(Amount(unit, self.of(unit)))


class Budget(Record):
    """One budget: its scope and target (an agent id, a task id, a date), the limit, what is spent, and
    which of its two events were already sent."""

    __slots__ = ("exceeded", "limit", "scope", "spent", "target", "warned")
    scope: str
    target: str
    limit: Amount
    spent: Spent
    warned: bool
    exceeded: bool

    def __init__(
        self,
        scope: str,
        target: str,
        limit: Amount,
        spent: Spent | None = None,
        warned: bool = False,
        exceeded: bool = False,
    ) -> None:
        self.scope, self.target, self.limit = scope, target, limit
        self.spent, self.warned, self.exceeded = spent or Spent(), warned, exceeded

    @property
    def share(self) -> float:
        return self.spent.of(self.limit.unit) / self.limit.value

    @property
    def over(self) -> bool:
        return self.share >= 1.0

    @property
    def name(self) -> str:
        """`agent a-1`, `task t-3`, `day 2026-11-27`."""
        return f"{self.scope} {self.target}"

    def words(self) -> str:
        """`agent a-1's budget of $2.50: $2.61 spent (104 %)`."""
        spent = self.spent.shown(self.limit.unit)
        return f"the {self.name} budget of {self.limit}: {spent} spent ({self.share:.0%})"


def next_step(budget: Budget) -> str | None:
    """What the budget asks for now: "exceeded" when its limit is reached and that was not said yet,
    "warning" at 80 % when that was not said yet, else None."""
    if budget.over and not budget.exceeded:
        return "exceeded"
    if budget.share >= WARN_AT and not budget.warned and not budget.over:
        return "warning"
    return None


def raise_step(limit: Amount) -> Amount:
    """How much the Raise button adds: the limit once more."""
    return limit


def pause_reason(budget: Budget) -> str:
    """What the PreToolUse hook tells Claude (and the person reads in the agent's log)."""
    return (
        f"Paused by ittybus: {budget.words()}. Stop here and wait: the person is asked to raise the budget "
        "(ib budget raise) or stop this agent."
    )


TURN_OVER = frozenset({"waiting", "complete", "error"})
"""Agent states whose turn ended (most often on a refused call): a lifted pause is told to them, since no
next tool call comes by itself."""


def raised_note(budget: Budget) -> str:
    """What a paused agent whose turn ended is told when its budget is raised."""
    spent = budget.spent.shown(budget.limit.unit)
    return (
        f"ittybus: the {budget.name} budget is now {budget.limit} ({spent} spent). Go on where you stopped."
    )


CONTINUE_NOTE = (
    "ittybus: the person lets you go on after the runaway watchdog paused you. Do not repeat the calls "
    "that looped; go on where you stopped."
)
