"""Tokens an agent spent: one `Usage` per answer of the model (input, output, cache write, cache read, the
model, when, for which task), summed per model and priced. Pure; the records come from the worker's
transcript tail (`bus.stores.usage_store` keeps them), the prices from `bus.costs.prices`.

A model without a price is still counted: its tokens are in every total, its cost is named "unpriced"
and left out of the dollars, never guessed.
"""

from __future__ import annotations

from bus.costs.prices import KINDS, cost, price_of
from bus.wire.record import Record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

UNPRICED = "unpriced"


class Usage(Record):
    """The tokens of one model answer."""

    __slots__ = ("at", "cache_read", "cache_write", "hour_writes", "input", "model", "output", "task")
    model: str
    at: float  # Unix seconds; 0 when the transcript line had no readable time
    input: int
    output: int
    cache_write: int
    cache_read: int
    task: str
    hour_writes: int  # of `cache_write`, those to the 1-hour cache (priced higher)

    def __init__(
        self,
        model: str,
        at: float = 0.0,
        input: int = 0,
        output: int = 0,
        cache_write: int = 0,
        cache_read: int = 0,
        task: str = "",
        hour_writes: int = 0,
    ) -> None:
        self.model, self.at, self.task, self.hour_writes = model, at, task, hour_writes
        self.input, self.output, self.cache_write, self.cache_read = input, output, cache_write, cache_read

    @property
    def tokens(self) -> int:
        return self.input + self.output + self.cache_write + self.cache_read

    def counts(self) -> dict[str, int]:
        return {kind: getattr(self, kind) for kind in KINDS}


class ModelTotal(Record):
    """One model's sums: its answers, its counts by kind, and their cost (None: unpriced)."""

    __slots__ = ("answers", "counts", "model", "usd")
    model: str
    answers: int
    counts: dict[str, int]
    usd: float | None

    def __init__(self, model: str, answers: int, counts: dict[str, int], usd: float | None) -> None:
        self.model, self.answers, self.counts, self.usd = model, answers, counts, usd

    @property
    def tokens(self) -> int:
        return sum(self.counts.values())


class Spend(Record):
    """What a set of answers cost, per model, and in all."""

    __slots__ = ("models",)
    models: tuple[ModelTotal, ...]

    def __init__(self, models: tuple[ModelTotal, ...] = ()) -> None:
        self.models = models

    @property
    def answers(self) -> int:
        return sum(m.answers for m in self.models)

    @property
    def tokens(self) -> int:
        return sum(m.tokens for m in self.models)

    @property
    def usd(self) -> float:
        """The priced part; see `unpriced` for the models left out."""
        return sum(m.usd for m in self.models if m.usd is not None)

    @property
    def unpriced(self) -> tuple[str, ...]:
        return tuple(m.model for m in self.models if m.usd is None)

    def counts(self) -> dict[str, int]:
        return {kind: sum(m.counts[kind] for m in self.models) for kind in KINDS}


def spend(records: Iterable[Usage], overrides: Mapping[str, tuple[float, ...]] | None = None) -> Spend:
    """The records summed per model (by name) and priced."""
    answers: dict[str, int] = {}
    hour_writes: dict[str, int] = {}
    counts: dict[str, dict[str, int]] = {}
    for record in records:
        answers[record.model] = answers.get(record.model, 0) + 1
        hour_writes[record.model] = hour_writes.get(record.model, 0) + record.hour_writes
        sums = counts.setdefault(record.model, dict.fromkeys(KINDS, 0))
        for kind in KINDS:
            sums[kind] += getattr(record, kind)
    models = []
    for model in sorted(counts):
        price = price_of(model, overrides)
        usd = None if price is None else cost(counts[model], price, hour_writes[model])
        models.append(ModelTotal(model, answers[model], counts[model], usd))
    return Spend(tuple(models))


def dollars(usd: float) -> str:
    """`$0.0042`, `$0.42`, `$12.30`: cents, or four places under a cent."""
    return f"${usd:.4f}" if 0 < usd < 0.01 else f"${usd:.2f}"


def spend_line(total: Spend) -> str:
    """`$0.42 · 81k tokens`, `$0.42 + unpriced (claude-x) · 81k tokens`: one line for a status or event."""
    money = dollars(total.usd)
    if total.unpriced:
        money += f" + {UNPRICED} ({', '.join(total.unpriced)})"
    return f"{money} · {kilo_tokens(total.tokens)} tokens"


def kilo_tokens(n: int) -> str:
    """`812`, `45k`, `1.2M`."""
    if n < 1000:
        return str(n)
    return f"{n / 1000:.0f}k" if n < 1_000_000 else f"{n / 1_000_000:.1f}M"


def spend_data(total: Spend) -> dict[str, object]:
    """The spend as JSON (an event's data, `ib cost --json`)."""
    return {
        "usd": round(total.usd, 6),
        "tokens": total.tokens,
        "answers": total.answers,
        **total.counts(),
        UNPRICED: list(total.unpriced),
        "models": {
            m.model: {"answers": m.answers, **m.counts, "usd": None if m.usd is None else round(m.usd, 6)}
            for m in total.models
        },
    }
