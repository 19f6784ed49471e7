"""Budgets as values: amounts read or refused in one line (0, negative, not a number, unknown unit), the
share spent, and when a budget asks for its warning and its pause."""

from __future__ import annotations

import pytest

from bus.costs.budgets import TOKENS, USD, Amount, Budget, Spent, next_step, parse_amount, pause_reason


@pytest.mark.parametrize(
    ("text", "amount"),
    [
        ("2.50$", Amount(USD, 2.5)),
        ("$2.50", Amount(USD, 2.5)),
        ("20$", Amount(USD, 20.0)),
        ("0.75usd", Amount(USD, 0.75)),
        (" $ 3 ", Amount(USD, 3.0)),
        ("400k", Amount(TOKENS, 400_000)),
        ("1.5M", Amount(TOKENS, 1_500_000)),
        ("250000", Amount(TOKENS, 250_000)),
        ("250_000", Amount(TOKENS, 250_000)),
        (".5k", Amount(TOKENS, 500)),
    ],
    ids=[
        "dollars-after",
        "dollars-before",
        "whole-dollars",
        "usd",
        "spaced",
        "kilo",
        "mega",
        "plain",
        "underscores",
        "leading-dot",
    ],
)
def test_amount_read(text: str, amount: Amount) -> None:
    assert parse_amount(text) == amount


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("0$", "must be more than 0"),
        ("0", "must be more than 0"),
        ("-2$", "must be more than 0"),
        ("-400k", "must be more than 0"),
        ("abc", "unknown unit"),
        ("two$", "is not a number"),
        ("1e3$", "is not a number"),
        ("nan$", "is not a number"),
        ("inf", "unknown unit"),
        ("1.2.3k", "is not a number"),
        ("5€", "unknown unit"),
        ("400x", "unknown unit"),
        ("", "is not a number"),
        ("$", "is not a number"),
        ("0.4", "under one token"),
        ("99999999999$", "implausibly large"),
    ],
    ids=[
        "zero-dollars",
        "zero-tokens",
        "negative-dollars",
        "negative-tokens",
        "word",
        "word-dollars",
        "exponent",
        "nan",
        "inf",
        "two-points",
        "euro",
        "unknown-suffix",
        "empty",
        "sign-only",
        "fraction-of-a-token",
        "huge",
    ],
)
def test_amount_refused(text: str, said: str) -> None:
    with pytest.raises(ValueError) as caught:
        parse_amount(text)
    message = str(caught.value)
    assert said in message
    assert "\n" not in message and repr(text) in message


@pytest.mark.parametrize(
    ("spent", "warned", "exceeded", "step"),
    [
        (Spent(1.0), False, False, None),
        (Spent(1.6), False, False, "warning"),
        (Spent(1.6), True, False, None),
        (Spent(2.0), False, False, "exceeded"),
        (Spent(2.4), True, False, "exceeded"),
        (Spent(2.4), True, True, None),
    ],
    ids=["under", "at-80", "warned-already", "at-100-skips-warning", "over", "paused-already"],
)
def test_next_step(spent: Spent, warned: bool, exceeded: bool, step: str | None) -> None:
    budget = Budget("agent", "a-1", Amount(USD, 2.0), spent, warned, exceeded)
    assert next_step(budget) == step


def test_token_budget_counts_tokens() -> None:
    budget = Budget("task", "t-1", Amount(TOKENS, 400_000), Spent(usd=99.0, tokens=100_000))
    assert budget.share == 0.25
    assert next_step(budget) is None


def test_pause_reason_names_budget_and_spend() -> None:
    budget = Budget("day", "2026-11-27", Amount(USD, 20.0), Spent(21.5, 3_000_000))
    reason = pause_reason(budget)
    assert "day 2026-11-27 budget of $20.00" in reason
    assert "$21.50 spent (108%)" in reason
    assert "\n" not in reason
