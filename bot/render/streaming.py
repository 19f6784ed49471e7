"""How one item of an agent's output (`out:<agent>` entry: kind, text, tool) looks in its topic.

Pure. Assistant text keeps its code blocks (as <pre>); tool uses read `Read(path)` with the tool name in
bold; results follow on their own line after an arrow. Everything is escaped.
"""

from __future__ import annotations

import re

from bot.render.render import escape, render_output

_TOOL_USE = re.compile(r"^\*\*(?P<name>[^*\n]{1,64})\*\*(?P<rest>.*)$", re.DOTALL)


def output_item(kind: str, text: str, tool: str = "") -> str:
    """Telegram HTML for one output item; "" for an item with nothing to show."""
    if not text.strip():
        return ""
    if kind == "text":
        return render_output(text)
    if kind == "tool_use":
        m = _TOOL_USE.match(text.strip())
        if m is None:
            return f"<b>{escape(tool)}</b> {escape(text.strip())}" if tool else escape(text.strip())
        return f"<b>{escape(m.group('name'))}</b>{escape(m.group('rest'))}"
    if kind == "tool_result":
        return "  → " + escape(text.strip())
    return escape(text.strip())
