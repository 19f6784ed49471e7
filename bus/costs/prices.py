"""What models cost: Anthropic's public list prices per Claude model family, and those of the other agent
programs' models by their exact id, in US dollars per million tokens, and the price of a count of tokens.
Pure; imports nothing, so the Stop hook can price a turn.

A Claude model id (`claude-sonnet-4-5-20250929`, `claude-3-5-haiku-20241022`, `claude-opus-4-1`) is read
as its family (`sonnet-4.5`, `haiku-3.5`, `opus-4.1`); a family not in the table is unpriced, never
guessed from a neighbour (Opus 4.5 costs a third of Opus 4.1). Another vendor's model is priced only by
its exact id (`gpt-5.5`, `gemini-2.5-flash`): any other is unpriced. The setting `IB_PRICES` adds or
replaces families, or prices one exact model id.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

KINDS = ("input", "output", "cache_write", "cache_read")
"""The four counts of a usage record, in the order a price lists them."""

MILLION = 1_000_000

# USD per million tokens: input, output, cache write (the 5-minute cache), cache read; Anthropic's list
# prices (platform.claude.com, "Pricing" and each model's overview page), read in November 2026. A write
# to the 1-hour cache costs twice the input price on every model (the same pages), see `cost`.
# Left out: Haiku 5.5, whose price depends on each request's prompt length (set it with IB_PRICES).
PRICES: dict[str, tuple[float, float, float, float]] = {
    "fable-5.1": (10.0, 50.0, 12.50, 0.25),
    "mythos-5.1": (10.0, 50.0, 12.50, 0.25),
    "fable-5": (10.0, 50.0, 12.50, 1.0),
    "mythos-5": (10.0, 50.0, 12.50, 1.0),
    "opus-5.5": (4.0, 20.0, 5.0, 0.20),
    "opus-5": (5.0, 25.0, 6.25, 0.50),
    "opus-4.8": (5.0, 25.0, 6.25, 0.50),
    "opus-4.7": (5.0, 25.0, 6.25, 0.50),
    "opus-4.6": (5.0, 25.0, 6.25, 0.50),
    "opus-4.5": (5.0, 25.0, 6.25, 0.50),
    "opus-4.1": (15.0, 75.0, 18.75, 1.50),
    "opus-4": (15.0, 75.0, 18.75, 1.50),
    "opus-3": (15.0, 75.0, 18.75, 1.50),
    "sonnet-5.5": (2.0, 10.0, 2.50, 0.20),
    "sonnet-5": (2.0, 10.0, 2.50, 0.20),
    "sonnet-4.6": (3.0, 15.0, 3.75, 0.30),
    "sonnet-4.5": (3.0, 15.0, 3.75, 0.30),
    "sonnet-4": (3.0, 15.0, 3.75, 0.30),
    "sonnet-3.7": (3.0, 15.0, 3.75, 0.30),
    "sonnet-3.5": (3.0, 15.0, 3.75, 0.30),
    "haiku-4.5": (1.0, 5.0, 1.25, 0.10),
    "haiku-3.5": (0.80, 4.0, 1.0, 0.08),
    "haiku-3": (0.25, 1.25, 0.30, 0.03),
}
# The same four prices for the models of Codex CLI and Gemini CLI, by exact model id, as their vendors list
# them for prompts under their long-context threshold (272K tokens for GPT-5.5, 200K for Gemini), read in
# November 2026: OpenAI's and Google's pricing pages. Neither bills a cache write apart from its input (the
# write price is the input price); a longer prompt costs more than this table says (set IB_PRICES).
MODEL_PRICES: dict[str, tuple[float, float, float, float]] = {
    "gpt-5.5": (5.0, 30.0, 5.0, 0.50),
    "gemini-2.5-flash": (0.30, 2.50, 0.30, 0.03),
}
HOUR_CACHE = 2.0  # a 1-hour cache write, in input prices

_TIERS = ("opus", "sonnet", "haiku", "fable", "mythos")


def family(model: str) -> str:
    """`claude-sonnet-4-5-20250929` → `sonnet-4.5`, `claude-3-5-haiku-latest` → `haiku-3.5`; "" when
    the id names no Claude tier."""
    parts = model.lower().removeprefix("anthropic/").partition("[")[0].split("-")  # opus-5-5[1m]: 1M context
    if not parts or parts[0] != "claude":
        return ""
    parts = parts[1:]
    tier = next((p for p in parts if p in _TIERS), "")
    if not tier:
        return ""
    at = parts.index(tier)
    # new ids put the version after the tier (claude-opus-4-1), old ones before it (claude-3-5-haiku)
    version = _version(parts[at + 1 :]) or _version(parts[:at])
    return f"{tier}-{version}" if version else ""


def _version(parts: list[str]) -> str:
    """`["4", "5", "20250929"]` → `4.5`; a date (8 digits) or a word ends the version."""
    digits: list[str] = []
    for part in parts:
        if not part.isdigit() or len(part) > 2 or len(digits) == 2:
            break
        digits.append(part)
    return ".".join(digits)


def price_of(
    model: str, overrides: Mapping[str, tuple[float, ...]] | None = None
) -> tuple[float, ...] | None:
    """The four per-million prices of `model`: an override for the exact id, else for its family, else
    the tables' (by family, or by exact id for another vendor's model); None when it has none (unpriced)."""
    extra = overrides or {}
    if model in extra:
        return extra[model]
    name = family(model)
    if name in extra:
        return extra[name]
    return PRICES.get(name) or MODEL_PRICES.get(model)


def cost(counts: Mapping[str, int], price: tuple[float, ...], hour_writes: int = 0) -> float:
    """Dollars for `counts` (by kind) at `price`; `hour_writes` of the cache writes went to the 1-hour
    cache (twice the input price, not the 5-minute write price)."""
    listed = sum(counts.get(kind, 0) * price[i] for i, kind in enumerate(KINDS))
    return (listed + hour_writes * (HOUR_CACHE * price[0] - price[2])) / MILLION


def parse_prices(text: str) -> dict[str, tuple[float, ...]]:
    """`IB_PRICES`: `opus-4.6=5,25,6.25,0.5;claude-x-1=1,5,1.25,0.1` (a family or an exact model id,
    then dollars per million tokens for input, output, cache write, cache read). Empty: none. A bad
    entry raises ValueError naming it and the form."""
    found: dict[str, tuple[float, ...]] = {}
    for entry in (e.strip() for e in text.split(";")):
        if not entry:
            continue
        name, sep, numbers = (p.strip() for p in entry.partition("="))
        values = [v.strip() for v in numbers.split(",")]
        if not sep or not name or len(values) != len(KINDS) or not all(_price(v) for v in values):
            raise ValueError(
                f"bad price {entry!r}: write MODEL=INPUT,OUTPUT,CACHE_WRITE,CACHE_READ in dollars per "
                "million tokens, entries separated by ';' (e.g. opus-4.6=5,25,6.25,0.5)"
            )
        found[name] = tuple(float(v) for v in values)
    return found


def _price(text: str) -> bool:
    """A price is a plain decimal number, 0 or more (no inf, nan, sign or exponent)."""
    whole, _, part = text.partition(".")
    return bool(whole or part) and (whole + part).isascii() and (whole + part).isdigit() and len(text) < 16
