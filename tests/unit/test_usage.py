"""Tokens and cost from transcript lines: model ids read as families, prices and their setting, answers
counted once across their repeated lines, cut lines and unknown models counted (never a crash)."""

from __future__ import annotations

import json
from collections.abc import Mapping

import pytest

from bus.costs.prices import family, parse_prices, price_of
from bus.costs.usage import Usage, spend, spend_data, spend_line
from worker.programs.claude.usage import UsageReader, read_transcript


@pytest.mark.parametrize(
    ("model", "expected"),
    [
        ("claude-sonnet-4-5-20250929", "sonnet-4.5"),
        ("claude-sonnet-4-5", "sonnet-4.5"),
        ("claude-opus-4-1-20250805", "opus-4.1"),
        ("claude-opus-4-20250514", "opus-4"),
        ("claude-opus-4-5-20251101", "opus-4.5"),
        ("claude-haiku-4-5-20251001", "haiku-4.5"),
        ("claude-3-5-haiku-20241022", "haiku-3.5"),
        ("claude-3-7-sonnet-latest", "sonnet-3.7"),
        ("claude-3-haiku-20240307", "haiku-3"),
        ("claude-opus-5-5", "opus-5.5"),
        ("claude-fable-5-1", "fable-5.1"),
        ("claude-opus-5-5[1m]", "opus-5.5"),
        ("claude-test", ""),
        ("<synthetic>", ""),
        ("gpt-5", ""),
        ("", ""),
    ],
    ids=lambda v: v or "empty",
)
def test_model_family(model: str, expected: str) -> None:
    assert family(model) == expected


@pytest.mark.parametrize(
    ("model", "overrides", "expected"),
    [
        ("claude-sonnet-4-5-20250929", {}, (3.0, 15.0, 3.75, 0.30)),
        ("claude-opus-4-5", {}, (5.0, 25.0, 6.25, 0.50)),
        ("claude-opus-4-1", {}, (15.0, 75.0, 18.75, 1.50)),
        ("claude-opus-5-5", {}, (4.0, 20.0, 5.0, 0.20)),
        ("claude-opus-6", {}, None),  # a family the table does not know is not guessed
        ("claude-haiku-5-5", {}, None),  # priced by prompt length: left to the setting
        ("claude-opus-6", {"opus-6": (5.0, 25.0, 6.25, 0.5)}, (5.0, 25.0, 6.25, 0.5)),
        ("claude-test", {"claude-test": (1.0, 2.0, 3.0, 4.0)}, (1.0, 2.0, 3.0, 4.0)),
        ("claude-sonnet-4-5", {"sonnet-4.5": (6.0, 22.5, 7.5, 0.6)}, (6.0, 22.5, 7.5, 0.6)),
        ("claude-test", {}, None),
        ("gpt-5.5", {}, (5.0, 30.0, 5.0, 0.5)),
        ("gemini-2.5-flash", {}, (0.30, 2.50, 0.30, 0.03)),
        ("gpt-5.5", {"gpt-5.5": (1.0, 2.0, 1.0, 0.1)}, (1.0, 2.0, 1.0, 0.1)),
        ("gpt-5.5-pro", {}, None),  # another vendor's model: its exact id or nothing, never a neighbour's
        ("gemini-2.5-flash-lite", {}, None),
    ],
    ids=[
        "sonnet",
        "opus-4.5",
        "opus-4.1",
        "opus-5.5",
        "unknown",
        "haiku-5.5",
        "family-set",
        "model-set",
        "family-replaced",
        "unpriced",
        "codex-model",
        "gemini-model",
        "codex-model-set",
        "codex-neighbour",
        "gemini-neighbour",
    ],
)
def test_price_of(model: str, overrides: dict[str, tuple[float, ...]], expected: object) -> None:
    assert price_of(model, overrides) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", {}),
        ("opus-4.6=5,25,6.25,0.5", {"opus-4.6": (5.0, 25.0, 6.25, 0.5)}),
        (" a=1,2,3,4 ; b = 0,0,0,0 ;", {"a": (1.0, 2.0, 3.0, 4.0), "b": (0.0, 0.0, 0.0, 0.0)}),
    ],
    ids=["empty", "one", "two-spaced"],
)
def test_price_setting(text: str, expected: dict[str, tuple[float, ...]]) -> None:
    assert parse_prices(text) == expected


@pytest.mark.parametrize(
    "text",
    ["ten", "a=1,2,3", "a=1,2,3,4,5", "=1,2,3,4", "a=1,2,x,4", "a=-1,2,3,4", "a=inf,1,1,1", "a=1e3,1,1,1"],
    ids=["word", "three", "five", "no-name", "not-number", "negative", "infinite", "exponent"],
)
def test_bad_price_setting_is_one_line(text: str) -> None:
    with pytest.raises(ValueError, match=r"bad price .*MODEL=INPUT,OUTPUT,CACHE_WRITE,CACHE_READ") as e:
        parse_prices(text)
    assert "\n" not in str(e.value)


def _line(
    message_id: str = "msg_1",
    request_id: str = "req_1",
    model: str = "claude-sonnet-4-5",
    usage: Mapping[str, object] | None = None,
    ts: str = "2026-11-26T10:00:00.000Z",
) -> str:
    usage = usage if usage is not None else {"input_tokens": 10, "output_tokens": 5}
    return json.dumps(
        {
            "type": "assistant",
            "timestamp": ts,
            "requestId": request_id,
            "message": {"id": message_id, "model": model, "role": "assistant", "usage": usage},
        }
    )


FULL = {
    "input_tokens": 3,
    "output_tokens": 7,
    "cache_creation_input_tokens": 1000,
    "cache_read_input_tokens": 20000,
}


@pytest.mark.parametrize(
    ("lines", "expected", "unreadable"),
    [
        ([_line(usage=FULL)], [Usage("claude-sonnet-4-5", 1795687200.0, 3, 7, 1000, 20000)], 0),
        ([_line(), _line(), _line()], [Usage("claude-sonnet-4-5", 1795687200.0, 10, 5)], 0),
        (
            [_line(), _line("msg_2", "req_2")],
            [Usage("claude-sonnet-4-5", 1795687200.0, 10, 5)] * 2,
            0,
        ),
        (
            [_line(request_id=""), _line(request_id="")],  # no ids: each line counts alone
            [Usage("claude-sonnet-4-5", 1795687200.0, 10, 5)] * 2,
            0,
        ),
        (
            [_line(), _line("msg_2", "req_2"), _line()],  # another answer's line between: still once
            [Usage("claude-sonnet-4-5", 1795687200.0, 10, 5)] * 2,
            0,
        ),
        ([_line(), _line()[:40]], [Usage("claude-sonnet-4-5", 1795687200.0, 10, 5)], 1),
        (["not json", "", "[1,2]", '{"type":"user","message":{"content":"hi"}}'], [], 1),
        ([_line(model="<synthetic>", usage={"input_tokens": 0, "output_tokens": 0})], [], 0),
        ([_line(model="claude-new-9", ts="yesterday")], [Usage("claude-new-9", 0.0, 10, 5)], 0),
        (
            [_line(usage={"input_tokens": "many", "output_tokens": -4, "cache_read_input_tokens": True})],
            [],
            0,
        ),
        ([_line(model="")], [Usage("unknown", 1795687200.0, 10, 5)], 0),
    ],
    ids=[
        "all-counts",
        "one-answer-three-lines",
        "two-answers",
        "no-ids",
        "interleaved",
        "cut-mid-line",
        "not-answers",
        "synthetic",
        "unknown-model-no-time",
        "nonsense-counts",
        "no-model",
    ],
)
def test_usage_from_lines(lines: list[str], expected: list[Usage], unreadable: int) -> None:
    reader = UsageReader()
    assert reader.lines(lines) == expected
    assert reader.unreadable == unreadable


def test_one_answer_split_across_two_reads_counts_once() -> None:
    reader = UsageReader()
    first = reader.lines([_line(), _line()])
    again = UsageReader(last=reader.last).lines([_line(), _line("msg_2", "req_2")])
    assert len(first) == 1 and len(again) == 1


def test_records_carry_the_task() -> None:
    assert UsageReader(task="t1").lines([_line()])[0].task == "t1"


def test_spend_per_model_priced_and_unpriced() -> None:
    records = [
        Usage("claude-sonnet-4-5", 0, 1_000_000, 0, 0, 0),
        Usage("claude-sonnet-4-5", 0, 0, 1_000_000, 0, 0),
        Usage("claude-opus-4-5", 0, 0, 0, 1_000_000, 1_000_000),
        Usage("claude-mystery", 0, 500, 500, 0, 0),
    ]
    total = spend(records)
    assert [(m.model, m.answers, m.usd) for m in total.models] == [
        ("claude-mystery", 1, None),
        ("claude-opus-4-5", 1, 6.75),
        ("claude-sonnet-4-5", 2, 18.0),
    ]
    assert total.usd == pytest.approx(24.75)
    assert total.tokens == 4_001_000
    assert total.unpriced == ("claude-mystery",)
    assert spend_line(total) == "$24.75 + unpriced (claude-mystery) · 4.0M tokens"
    data = spend_data(total)
    assert data["unpriced"] == ["claude-mystery"] and data["input"] == 1_000_500
    models = data["models"]
    assert isinstance(models, dict) and models["claude-mystery"]["usd"] is None


def test_hour_cache_writes_cost_twice_the_input_price() -> None:
    hour = {**FULL, "cache_creation": {"ephemeral_5m_input_tokens": 400, "ephemeral_1h_input_tokens": 600}}
    record = UsageReader().lines([_line(model="claude-sonnet-4-5", usage=hour)])[0]
    assert (record.cache_write, record.hour_writes) == (1000, 600)
    # 3 in at $3, 7 out at $15, 400 5-minute writes at $3.75, 600 hour writes at $6, 20000 reads at $0.30
    expected = (3 * 3 + 7 * 15 + 400 * 3.75 + 600 * 6 + 20000 * 0.30) / 1e6
    assert spend([record]).usd == pytest.approx(expected)


@pytest.mark.parametrize(
    ("records", "line"),
    [
        ([], "$0.00 · 0 tokens"),
        ([Usage("claude-haiku-4-5", 0, 1000, 200)], "$0.0020 · 1k tokens"),
        ([Usage("claude-sonnet-4-5", 0, 30_000, 2_000)], "$0.12 · 32k tokens"),
    ],
    ids=["nothing", "under-a-cent", "cents"],
)
def test_spend_line(records: list[Usage], line: str) -> None:
    assert spend_line(spend(records)) == line


def test_a_missing_transcript_has_no_usage(tmp_path: object) -> None:
    assert read_transcript("/nonexistent/transcript.jsonl") == ([], 0)
