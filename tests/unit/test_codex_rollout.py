"""Codex CLI's session log (a real 0.169.0 rollout: a command, a patch and two turns) read as the agent's
output and its tokens: the same items however the file is cut into reads, each answer counted once
across readers, its model carried over, and unknown or broken lines never a crash."""

from __future__ import annotations

from pathlib import Path

import pytest

from bus.costs.usage import Usage, spend, spend_line
from worker.programs.codex.program import CodexCli
from worker.programs.codex.rollout import RolloutParser, summarize_output
from worker.programs.codex.usage import UsageReader, read_rollout
from worker.programs.output import OutputItem

PATCH = "*** Begin Patch\n*** Update File: a\n-x\n+y\n+z\n*** End Patch"
ROLLOUT = Path(__file__).parents[1] / "fixtures" / "codex-0.169.0" / "rollout-two-turns.jsonl"


def _fed(data: bytes, cut: int) -> list[OutputItem]:
    """What the worker's tail gets reading `data` `cut` bytes at a time from its stored offset."""
    parser, items, offset, end = RolloutParser(), [], 0, 0
    while end < len(data):
        end = min(len(data), end + cut)
        found, consumed = parser.feed(data[offset:end])
        items += found
        offset += consumed
    return items


def test_the_output_of_two_turns() -> None:
    items, consumed = CodexCli().transcript_reader().feed(ROLLOUT.read_bytes())
    assert consumed == ROLLOUT.stat().st_size
    assert [(i.kind, i.text, i.tool) for i in items] == [
        ("prompt", "", None),
        ("text", "Listing first.", None),
        ("tool_use", "**Bash**(ls && git status --short)", "Bash"),
        ("tool_result", "Output 2 lines", "Bash"),
        ("tool_use", "**Patch**(notes.txt)", "Patch"),
        ("tool_result", "Added 2, removed 0", "Patch"),
        ("text", "Listed and wrote notes.\n\nI HAVE COMPLETED THE GOAL", None),
        ("prompt", "", None),
        ("text", "Which one?\n\nWAITING", None),
    ]
    # a result is matched to its call (its tool and summary above); the answer's items carry its context's
    # size (input + output)
    assert [i.tokens for i in items if i.kind == "text"] == [1281, 1248, 1240]
    assert all(i.tokens is None for i in items if i.kind in ("prompt", "tool_result"))


@pytest.mark.parametrize("cut", [1, 97, 4096, 1 << 20])
def test_the_same_items_however_the_log_is_cut(cut: int) -> None:
    whole, _ = RolloutParser().feed(ROLLOUT.read_bytes())
    items = _fed(ROLLOUT.read_bytes(), cut)
    assert [(i.kind, i.text, i.tool) for i in items] == [(i.kind, i.text, i.tool) for i in whole]


def test_each_answer_s_tokens_with_the_turn_s_model() -> None:
    records, unreadable = read_rollout(str(ROLLOUT))
    assert unreadable == 0
    # input_tokens 1200 include 1000 cached: 200 fresh, 1000 read from the cache
    assert [(r.model, r.input, r.cache_read, r.cache_write, r.output) for r in records] == [
        ("gpt-5.5", 200, 1000, 0, 81),
        ("gpt-5.5", 200, 1000, 0, 48),
        ("gpt-5.5", 200, 1000, 0, 48),
        ("gpt-5.5", 200, 1000, 0, 40),
    ]
    assert all(r.at > 1.7e9 for r in records)


def test_a_reader_that_starts_after_the_last_answer_counts_the_rest_once_with_its_model() -> None:
    lines = ROLLOUT.read_bytes().splitlines()
    first = CodexCli().usage_reader("", "t-1")
    early = first.lines(lines[:20])
    # the next read starts after the turn's `turn_context` and again over lines already read
    second = CodexCli().usage_reader(first.last, "t-1")
    late = second.lines(lines[15:])
    assert len(early) + len(late) == 4
    assert [r.model for r in late] == ["gpt-5.5", "gpt-5.5"] and {r.task for r in early + late} == {"t-1"}
    assert second.last.startswith("resp_fake") and second.last.endswith(" gpt-5.5")


def test_a_piece_of_the_log_with_the_turn_s_model_and_no_answer_passes_the_model_on() -> None:
    """The worker's live tail may read the turn's `turn_context` before any answer of the turn is written:
    the next piece, read by a new reader from `last`, still knows the model."""
    lines = ROLLOUT.read_bytes().splitlines()
    first_answer = next(i for i, line in enumerate(lines) if b'"token_usage_record"' in line)
    assert any(b'"turn_context"' in line for line in lines[:first_answer])
    first = CodexCli().usage_reader("", "")
    assert first.lines(lines[:first_answer]) == [] and first.last == " gpt-5.5"
    rest = CodexCli().usage_reader(first.last, "").lines(lines[first_answer:])
    assert len(rest) == 4 and {r.model for r in rest} == {"gpt-5.5"}


def test_a_cut_line_is_unreadable_and_other_lines_are_not_usage() -> None:
    reader = UsageReader()
    assert reader.lines(['{"type":"token_usage_record","payload":{"usa', "not json", "{}", "[1]"]) == []
    assert reader.unreadable == 2


def test_an_answer_before_any_turn_context_is_counted_as_an_unknown_model() -> None:
    usage = '{"input_tokens":10,"output_tokens":2}'
    line = f'{{"type":"token_usage_record","payload":{{"response_id":"r1","usage":{usage}}}}}'
    assert UsageReader().lines([line]) == [Usage("unknown", input=10, output=2)]


def test_codex_tokens_are_priced_by_the_model_and_an_unknown_one_is_counted_unpriced() -> None:
    records, _ = read_rollout(str(ROLLOUT))
    total = spend(records)
    assert total.tokens == 4 * 1200 + 81 + 48 + 48 + 40
    # gpt-5.5: $5 a million fresh input, $30 output, $0.50 cached input
    assert total.unpriced == () and total.usd == pytest.approx((800 * 5.0 + 217 * 30.0 + 4000 * 0.5) / 1e6)
    renamed = [Usage("gpt-9-preview", r.at, r.input, r.output, r.cache_write, r.cache_read) for r in records]
    unknown = spend(renamed)
    assert unknown.tokens == total.tokens and unknown.usd == 0 and unknown.unpriced == ("gpt-9-preview",)
    assert "unpriced (gpt-9-preview)" in spend_line(unknown)


@pytest.mark.parametrize(
    ("name", "args", "output", "expected"),
    [
        ("exec_command", {}, "Process exited with code 0\nOutput:\na\nb\n", "Output 2 lines"),
        ("exec_command", {}, "Process exited with code 0\nOutput:\n", "Output 0 lines"),
        ("exec_command", {}, "Process exited with code 2\nOutput:\nboom\n", "Error: exit 2: boom"),
        (
            "apply_patch",
            {"patch": "*** Begin Patch\n*** Update File: a\n-x\n+y\n+z\n"},
            "Exit code: 0\n",
            "Added 2, removed 1",
        ),
        (
            "apply_patch",
            {},
            "Exit code: 1\nOutput:\nverification failed\n",
            "Error: exit 1: verification failed",
        ),
        ("web_search", {}, "three results", "three results"),
        ("web_search", {}, "", "Done"),
    ],
    ids=["output", "no-output", "failed", "patch", "patch-failed", "other-tool", "other-empty"],
)
def test_a_call_s_output_in_one_line(name: str, args: dict[str, object], output: str, expected: str) -> None:
    assert summarize_output(name, args, output) == expected


def test_unknown_entries_and_a_result_without_its_call_are_no_crash() -> None:
    data = (
        b'{"type":"response_item","payload":{"type":"reasoning","summary":[]}}\n'
        b'{"type":"brand_new","payload":{}}\n'
        b'{"type":"response_item","payload":{"type":"function_call_output","call_id":"c9","output":"ok"}}\n'
        b'{"type":"response_item","payload":{"type":"function_call","call_id":"c8","name":"x","arguments":"{bad"}}\n'
    )
    items, consumed = RolloutParser().feed(data)
    assert consumed == len(data)
    assert [(i.kind, i.text) for i in items] == [("tool_result", "ok"), ("tool_use", "**x**()")]
