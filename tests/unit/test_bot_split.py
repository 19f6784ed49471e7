"""Splitting long Telegram HTML into messages, and the edit-in-place buffer for streaming output."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.render.split import OutputBuffer, OutputStep, split_message, telegram_length
from tests.fake_telegram.markup import visible_text

PY = '<pre><code class="language-python">'
END = "</code></pre>"


def numbered(n: int, width: int = 9) -> str:
    return "\n".join(f"line {i:0{width - 5}d}" for i in range(n))


SPLITS = [
    ("fits", "hello\nworld", 40, ["hello\nworld"]),
    ("blank", " \n\n ", 40, []),
    (
        "on-line-boundaries",
        numbered(6),
        20,
        ["line 0000\nline 0001", "line 0002\nline 0003", "line 0004\nline 0005"],
    ),
    ("blank-lines-at-cuts-dropped", "aaaaaaaaaa\n\n\nbbbbbbbbbb", 12, ["aaaaaaaaaa", "bbbbbbbbbb"]),
    (
        "block-moves-whole-to-next-part",
        "intro line here\n<pre>aaaa\nbbbb</pre>\nafter",
        32,
        ["intro line here", "<pre>aaaa\nbbbb</pre>\nafter"],
    ),
    (
        "block-split-and-reopened",
        f"{PY}aaaaaaaaaa\nbbbbbbbbbb\ncccccccccc\ndddddddddd{END}",
        75,
        [f"{PY}aaaaaaaaaa\nbbbbbbbbbb{END}", f"{PY}cccccccccc\ndddddddddd{END}"],
    ),
    (
        "fence-split-and-reopened",
        "```go\n" + "\n".join(["x := 1 // aaaaa"] * 4) + "\n```",
        48,
        ["```go\nx := 1 // aaaaa\nx := 1 // aaaaa\n```", "```go\nx := 1 // aaaaa\nx := 1 // aaaaa\n```"],
    ),
    (
        "long-line-cut-at-space",
        "aaaa bbbb cccc dddd eeee ffff gggg hhhh iiii",
        32,
        ["aaaa bbbb cccc dddd eeee ffff ", "gggg hhhh iiii"],
    ),
    ("long-word-hard-cut", "x" * 70, 32, ["x" * 32, "x" * 32, "x" * 6]),
    ("entities-never-cut", "&amp;" * 10, 32, ["&amp;" * 6, "&amp;" * 4]),
    (
        "tag-in-long-line-reopened",
        "<b>" + "y" * 40 + "</b>",
        32,
        ["<b>" + "y" * 25 + "</b>", "<b>" + "y" * 15 + "</b>"],
    ),
    ("astral-chars-count-two", "😀" * 20, 32, ["😀" * 16, "😀" * 4]),
]


@pytest.mark.parametrize(("text", "limit", "parts"), [r[1:] for r in SPLITS], ids=[r[0] for r in SPLITS])
def test_split_message(text: str, limit: int, parts: list[str]) -> None:
    assert split_message(text, limit) == parts
    for part in parts:
        assert telegram_length(part) <= limit


def test_the_default_limit_is_telegrams() -> None:
    text = numbered(1000)
    parts = split_message(text)
    assert len(parts) == 3
    assert all(telegram_length(p) <= 4096 for p in parts)
    assert "\n".join(parts) == text


def test_a_tiny_limit_is_refused() -> None:
    with pytest.raises(ValueError, match="too small"):
        split_message("x" * 100, 4)


def test_a_huge_code_block_becomes_valid_messages() -> None:
    code = "\n".join(f"print({i} &lt; {i + 1})  # &amp; more text here" for i in range(400))
    text = f"Output:\n{PY}{code}{END}\nend"
    parts = split_message(text, 1000)
    assert len(parts) > 10
    for part in parts:
        assert telegram_length(part) <= 1000
        visible_text(part, "HTML")  # balanced, as Telegram requires
    assert parts[0] == "Output:"  # the block does not fit beside it: it starts a message of its own
    assert all(p.startswith(PY) for p in parts[1:])
    assert all(p.endswith(END) for p in parts[1:-1])
    assert parts[-1].endswith(f"{END}\nend")


def _squash(text: str) -> str:
    return re.sub(r"\s", "", text)


@given(st.text(alphabet=st.sampled_from("ab c😀\n"), max_size=600), st.integers(min_value=32, max_value=120))
def test_plain_text_keeps_every_character_within_the_limit(text: str, limit: int) -> None:
    parts = split_message(text, limit)
    assert all(telegram_length(p) <= limit for p in parts)
    assert all(p.strip() for p in parts)
    assert _squash("".join(parts)) == _squash(text)


_LINE = st.sampled_from(["plain words", "&lt;x&gt; &amp; y", "<b>bold</b> text", "", "a" * 50])


@given(st.lists(_LINE, max_size=30), st.lists(_LINE, max_size=30), st.integers(min_value=64, max_value=200))
def test_markup_stays_balanced(before: list[str], code: list[str], limit: int) -> None:
    text = "\n".join([*before, PY + "\n".join(code) + END, "the end"])
    for part in split_message(text, limit):
        assert telegram_length(part) <= limit
        visible_text(part, "HTML")


BUFFER = [
    ("first-item-new-message", "", "hello", [OutputStep(edit=False, text="hello")], "hello"),
    ("next-item-edits", "hello", "world", [OutputStep(edit=True, text="hello\nworld")], "hello\nworld"),
    ("full-buffer-new-message", "a" * 30, "b" * 20, [OutputStep(edit=False, text="b" * 20)], "b" * 20),
    ("blank-item-nothing", "hello", "  \n", [], "hello"),
    (
        "huge-item-several-messages",
        "hello",
        "c" * 90,
        [
            OutputStep(edit=False, text="c" * 40),
            OutputStep(edit=False, text="c" * 40),
            OutputStep(edit=False, text="c" * 10),
        ],
        "c" * 10,
    ),
]


@pytest.mark.parametrize(
    ("current", "item", "steps", "after"), [r[1:] for r in BUFFER], ids=[r[0] for r in BUFFER]
)
def test_output_buffer(current: str, item: str, steps: list[OutputStep], after: str) -> None:
    buffer, got = OutputBuffer(current, soft_limit=40).add(item)
    assert got == steps
    assert buffer == OutputBuffer(after, soft_limit=40)


def test_output_buffer_streams_many_items_within_the_soft_limit() -> None:
    buffer = OutputBuffer()
    messages: list[str] = []
    for i in range(500):
        buffer, steps = buffer.add(f"**Read**(src/module_{i}.py) → Read {i} lines")
        for step in steps:
            if step.edit:
                messages[-1] = step.text
            else:
                messages.append(step.text)
    assert len(messages) > 1
    assert all(telegram_length(m) <= 3800 for m in messages)
    assert "\n".join(messages).count("**Read**") == 500
