"""What `ib cost` and the bot's `/cost` say: a `--since` span read, the answers of a scope summed per
agent and in all, as text lines or JSON. Pure.
"""

from __future__ import annotations

from collections.abc import Mapping

from bus.costs.usage import Spend, Usage, dollars, spend, spend_data, spend_line

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
LONGEST = 10 * 365 * 86400  # ten years: anything longer is a slip of the keyboard


def since_seconds(text: str) -> float:
    """`90s`, `30m`, `2h`, `1d`, `1w` (also `1h30m`) as seconds; ValueError with one line otherwise."""
    total, number = 0, ""
    cleaned = text.strip().lower()
    for char in cleaned:
        if char.isascii() and char.isdigit():
            number += char
        elif char in _UNITS and number:
            total += int(number) * _UNITS[char]
            number = ""
        else:
            number = "x"
            break
    if number or not cleaned or not 0 < total <= LONGEST:
        raise ValueError(
            f"--since {text!r} is not a duration: write a number and a unit, s m h d or w "
            "(30m, 2h, 1d, 1h30m), up to ten years"
        )
    return float(total)


def report(by_agent: Mapping[str, list[Usage]], prices: Mapping[str, tuple[float, ...]]) -> dict[str, Spend]:
    """Each agent's spend, and all of them under "" (the total)."""
    spends = {agent: spend(records, prices) for agent, records in sorted(by_agent.items())}
    spends[""] = spend([r for records in by_agent.values() for r in records], prices)
    return spends


def report_json(spends: Mapping[str, Spend], scope: Mapping[str, str]) -> dict[str, object]:
    return {
        "scope": dict(scope),
        "total": spend_data(spends[""]),
        "agents": {agent: spend_data(s) for agent, s in spends.items() if agent},
    }


def report_lines(spends: Mapping[str, Spend], title: str) -> list[str]:
    """A table: one row per agent and model, then the total; the models without a price named."""
    total = spends[""]
    if not total.models:
        return [f"{title}: no model answers recorded"]
    lines = [f"{title}", _row("AGENT", "MODEL", "ANSWERS", "INPUT", "OUTPUT", "CACHE W", "CACHE R", "COST")]
    for agent, agent_spend in spends.items():
        if not agent:
            continue
        for m in agent_spend.models:
            usd = "unpriced" if m.usd is None else dollars(m.usd)
            c = m.counts
            lines.append(
                _row(
                    agent, m.model, m.answers, c["input"], c["output"], c["cache_write"], c["cache_read"], usd
                )
            )
    lines.append(f"total: {spend_line(total)} in {total.answers} answers")
    if total.unpriced:
        lines.append(f"no price for {', '.join(total.unpriced)}: set IB_PRICES (see docs/guide/cost.md)")
    return lines


def _row(*cells: object) -> str:
    widths = (16, 28, 8, 10, 10, 11, 12, 10)
    return "  ".join(
        str(cell).ljust(w) if i < 2 else str(cell).rjust(w)
        for i, (cell, w) in enumerate(zip(cells, widths, strict=True))
    ).rstrip()
