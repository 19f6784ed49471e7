"""Reading Claude Code transcripts (the session JSONL under ~/.claude/projects): complete lines in,
short output items out (assistant text, `**Read**(path)` tool uses, `Read 45 lines` results, and an
empty `prompt` item where a new turn starts: the agent was given a prompt).
Pure: the caller reads the file and keeps the offset; this module only parses bytes."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import replace

from worker.programs.output import OutputItem

ARGUMENT_WIDTH = 80
# The input key that names what a tool works on; tools not listed show their first string input.
ARGUMENT_KEYS = {
    "Read": "file_path",
    "Write": "file_path",
    "Edit": "file_path",
    "MultiEdit": "file_path",
    "NotebookEdit": "notebook_path",
    "Bash": "command",
    "Grep": "pattern",
    "Glob": "pattern",
    "Task": "description",
    "WebFetch": "url",
    "WebSearch": "query",
}
PATH_KEYS = {"file_path", "notebook_path"}
# Tool ids whose result has not arrived yet are remembered; an interrupted session never sends some.
MAX_PENDING = 512

_REMINDER = re.compile(r"<system-reminder>.*?</system-reminder>", re.DOTALL)
_FOUND_HEADER = re.compile(r"^(Found \d+|No (files|matches) found)")
INTERRUPTED = "[Request interrupted"  # Claude Code notes an interruption as a user text: not a prompt


def shorten(text: str, width: int = ARGUMENT_WIDTH) -> str:
    """One line of at most `width` characters; what is cut becomes an ellipsis."""
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1].rstrip() + "…"


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def _line_count(text: str) -> int:
    return len(text.splitlines())


def tool_argument(name: str, tool_input: Mapping[str, object], cwd: str = "") -> str:
    """What a tool works on, shortened; file paths under `cwd` are shown relative to it."""
    key = ARGUMENT_KEYS.get(name)
    value = tool_input.get(key) if key else next((v for v in tool_input.values() if isinstance(v, str)), "")
    if not isinstance(value, str):
        return ""
    if key in PATH_KEYS and cwd and value.startswith(cwd.rstrip("/") + "/"):
        value = value[len(cwd.rstrip("/")) + 1 :]
    return shorten(value)


def tool_use_text(name: str, tool_input: Mapping[str, object], cwd: str = "") -> str:
    return f"**{name}**({tool_argument(name, tool_input, cwd)})"


def _edit_counts(name: str, tool_input: Mapping[str, object]) -> tuple[int, int]:
    edits = tool_input.get("edits") if name == "MultiEdit" else [tool_input]
    added = removed = 0
    for edit in edits if isinstance(edits, list) else []:
        if isinstance(edit, Mapping):
            added += _line_count(str(edit.get("new_string", "")))
            removed += _line_count(str(edit.get("old_string", "")))
    return added, removed


def _found(name: str, tool_input: Mapping[str, object], lines: list[str]) -> str:
    listed = [line for line in lines if line.strip()]
    if listed and _FOUND_HEADER.match(listed[0]):
        listed = listed[1:]
    noun = "line" if name == "Grep" and tool_input.get("output_mode") == "content" else "file"
    return f"Found {_plural(len(listed), noun)}"


def summarize_result(name: str | None, tool_input: Mapping[str, object], content: str, is_error: bool) -> str:
    """The one-line result of a tool, as Claude Code shows it under the tool's line."""
    lines = _REMINDER.sub("", content).strip("\n").splitlines()
    first = next((line.strip() for line in lines if line.strip()), "")
    if is_error:
        return f"Error: {shorten(first)}" if first else "Error"
    if name in ("Edit", "MultiEdit"):
        added, removed = _edit_counts(name, tool_input)
        return f"Added {added}, removed {removed}"
    if name in ("Grep", "Glob"):
        return _found(name, tool_input, lines)
    counted = {
        "Read": ("Read", len(lines)),
        "Write": ("Wrote", _line_count(str(tool_input.get("content", "")))),
        "Bash": ("Output", len(lines)),
    }
    if name in counted:
        verb, count = counted[name]
        return f"{verb} {_plural(count, 'line')}"
    return shorten(first) if first else "Done"


def _result_text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(block.get("text", ""))
            for block in content
            if isinstance(block, Mapping) and block.get("type") == "text"
        )
    return ""


class TranscriptParser:
    """Parses a transcript fed in pieces, remembering which tool each pending tool id belongs to."""

    def __init__(self) -> None:
        self._pending: dict[str, tuple[str, Mapping[str, object]]] = {}

    def feed(self, data: bytes) -> tuple[list[OutputItem], int]:
        """Items from the complete lines of `data` and how many bytes those lines take.

        A last line without its newline is left for the next call. Lines that are not JSON or not
        a shape this parser knows are consumed and skipped.
        """
        consumed = data.rfind(b"\n") + 1
        items: list[OutputItem] = []
        for raw in data[:consumed].splitlines():
            try:
                entry = json.loads(raw)
            except ValueError:
                continue
            if isinstance(entry, dict):
                items.extend(self._entry_items(entry))
        return items, consumed

    def _entry_items(self, entry: Mapping[str, object]) -> list[OutputItem]:
        message = entry.get("message")
        if entry.get("type") not in ("user", "assistant") or entry.get("isSidechain") is True:
            return []
        if not isinstance(message, Mapping):
            return []
        content = message.get("content")
        ts = str(entry.get("timestamp", ""))
        cwd = str(entry.get("cwd", ""))
        if entry["type"] == "assistant" and isinstance(content, str):
            content = [{"type": "text", "text": content}]
        if entry["type"] == "user" and _is_prompt(content) and entry.get("isMeta") is not True:
            return [OutputItem("prompt", "", ts=ts)]  # a new turn starts; what was typed is not output
        if not isinstance(content, list):
            return []
        items = []
        tokens = context_tokens(message.get("usage")) if entry["type"] == "assistant" else None
        for block in content:
            if not isinstance(block, Mapping):
                continue
            item = self._block_item(str(entry["type"]), block, ts, cwd)
            if item is not None:
                items.append(item if tokens is None else replace(item, tokens=tokens))
        return items

    def _block_item(self, role: str, block: Mapping[str, object], ts: str, cwd: str) -> OutputItem | None:
        kind = block.get("type")
        if role == "assistant" and kind == "text":
            text = str(block.get("text", "")).strip()
            return OutputItem("text", text, ts=ts) if text else None
        if role == "assistant" and kind == "tool_use":
            name, tool_id, tool_input = block.get("name"), block.get("id"), block.get("input")
            if not isinstance(name, str) or not isinstance(tool_id, str):
                return None
            args = tool_input if isinstance(tool_input, Mapping) else {}
            self._remember(tool_id, name, args)
            return OutputItem("tool_use", tool_use_text(name, args, cwd), name, ts=ts)
        if role == "user" and kind == "tool_result":
            tool_id = block.get("tool_use_id")
            if not isinstance(tool_id, str):
                return None
            name, args = self._pending.pop(tool_id, (None, {}))
            text = summarize_result(
                name, args, _result_text(block.get("content")), block.get("is_error") is True
            )
            return OutputItem("tool_result", text, name, ts=ts)
        return None

    def _remember(self, tool_id: str, name: str, tool_input: Mapping[str, object]) -> None:
        self._pending[tool_id] = (name, tool_input)
        while len(self._pending) > MAX_PENDING:
            del self._pending[next(iter(self._pending))]


def context_tokens(usage: object) -> int | None:
    """The tokens in the model's context after one answer: what it read (fresh and cached) and wrote."""
    if not isinstance(usage, Mapping):
        return None
    keys = ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens", "output_tokens")
    counts = [usage.get(key) for key in keys]
    numbers = [c for c in counts if isinstance(c, int) and not isinstance(c, bool) and c >= 0]
    return sum(numbers) if numbers else None


def _is_prompt(content: object) -> bool:
    """A user entry that gives the agent a turn: typed text (a string, or text blocks), not tool results."""
    if isinstance(content, str):
        return bool(content.strip()) and not content.startswith(INTERRUPTED)
    if not isinstance(content, list):
        return False
    texts = [b for b in content if isinstance(b, Mapping) and b.get("type") == "text"]
    results = [b for b in content if isinstance(b, Mapping) and b.get("type") == "tool_result"]
    return bool(texts) and not results and not str(texts[0].get("text", "")).startswith(INTERRUPTED)
