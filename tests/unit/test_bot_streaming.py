"""How output items of an agent look in its topic."""

from __future__ import annotations

import pytest

from bot.render.streaming import output_item
from tests.fake_telegram.markup import visible_text

ITEMS = [
    ("text", "text", "Done: <b> & all", "", "Done: &lt;b&gt; &amp; all"),
    (
        "text-with-code",
        "text",
        "Run:\n```sh\nls <dir>\n```",
        "",
        'Run:\n<pre><code class="language-sh">ls &lt;dir&gt;</code></pre>',
    ),
    ("tool-use", "tool_use", "**Read**(src/a<b>.py)", "Read", "<b>Read</b>(src/a&lt;b&gt;.py)"),
    ("tool-use-unusual", "tool_use", "grep x", "Grep", "<b>Grep</b> grep x"),
    ("tool-result", "tool_result", "Read 45 lines", "Read", "  → Read 45 lines"),
    ("unknown-kind", "thinking", "hmm & so", "", "hmm &amp; so"),
    ("blank", "text", "  \n ", "", ""),
]


@pytest.mark.parametrize(
    ("kind", "text", "tool", "expected"), [i[1:] for i in ITEMS], ids=[i[0] for i in ITEMS]
)
def test_output_item(kind: str, text: str, tool: str, expected: str) -> None:
    html = output_item(kind, text, tool)
    assert html == expected
    if html:
        visible_text(html, "HTML")  # Telegram accepts it
