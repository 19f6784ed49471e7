"""Reading Gemini CLI's chat log (`~/.gemini/tmp/<project>/chats/session-*.jsonl` in the agent's HOME, the
`transcript_path` of its hooks): the agent's output as `OutputItem`s and the tokens of each model answer
as `bus.costs.usage.Usage` (worker.programs.gemini.usage). Pure.

0.61.0 appends one JSON object a line (tests/fixtures/gemini-0.61.0/chat-two-turns.jsonl): a header
(`sessionId`, `startTime`), then messages (`id`, `timestamp`, `type` user or gemini, `content`; a gemini
one with `tokens` and `model`), and `{"$set": {...}}` lines that update the session's fields. A message
is written again, whole, when it changes: the model's answer first with its text, then with its
`toolCalls` (each with its `result`) once they ran. So the log is read by message id: the text and the
tokens once, each tool call once. The `$set` of the whole `messages` list, at the start, holds only
Gemini CLI's own session context, and is skipped.
"""

from __future__ import annotations

from worker.programs.claude.transcript import MAX_PENDING, summarize_result, tool_use_text
from worker.programs.jsonl import entries
from worker.programs.output import OutputItem
from worker.programs.usage_lines import token_count

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

# Gemini CLI's tools as the output shows them: the name Claude Code's tool for the same job has (its
# argument and result read the same way); tools not listed keep their own name
TOOL_NAMES = {
    "run_shell_command": "Bash",
    "write_file": "Write",
    "replace": "Edit",
    "read_file": "Read",
    "read_many_files": "Read",
    "glob": "Glob",
    "search_file_content": "Grep",
    "grep_search": "Grep",
    "web_fetch": "WebFetch",
    "google_web_search": "WebSearch",
}
_CONTEXT = "<session_context>"  # the user message Gemini CLI writes itself at a session's start
_SHELL_OUTPUT = "Output: "
_SHELL_END = (
    "Process Group PGID",
    "Exit Code",
    "Error:",
    "Signal:",
    "Background PIDs",
    "</untrusted_context>",
)


def _text(content: object) -> str:
    """A message's text: a string, or the `text` of its parts."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict) and "text" in p)


def shell_output(output: str) -> str:
    """The command's own output inside the shell tool's report (`Output: ...` up to `Process Group
    PGID: ...`)."""
    lines = output.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith(_SHELL_OUTPUT)), None)
    if start is None:
        return ""
    kept = [lines[start][len(_SHELL_OUTPUT) :]]
    for line in lines[start + 1 :]:
        if line.startswith(_SHELL_END):
            break
        kept.append(line)
    return "\n".join(kept).strip("\n")


def _result_output(call: Mapping[str, object]) -> str:
    results = call.get("result")
    for result in results if isinstance(results, list) else []:
        response = result.get("functionResponse") if isinstance(result, dict) else None
        answer = response.get("response") if isinstance(response, dict) else None
        if isinstance(answer, dict):
            return str(answer.get("output", answer.get("error", "")))
    return ""


def result_text(call: Mapping[str, object]) -> str:
    """One line for a tool call's result, as Claude Code's tool of the same job shows it."""
    name = str(call.get("name", ""))
    args = call.get("args") if isinstance(call.get("args"), dict) else {}
    assert isinstance(args, dict)
    output = _result_output(call)
    failed = call.get("status") not in ("success", None)
    if name == "run_shell_command" and not failed:
        output = shell_output(output)
    return summarize_result(TOOL_NAMES.get(name), args, output, failed)


class ChatParser:
    """Reads a chat log fed in pieces (`TranscriptReading`): each message's text once, each tool call
    once it has its result."""

    def __init__(self) -> None:
        self._said: dict[str, None] = {}  # message ids whose text was shown (insertion-ordered, capped)
        self._calls: dict[str, None] = {}  # tool call ids shown

    def feed(self, data: bytes) -> tuple[list[OutputItem], int]:
        found, consumed = entries(data)
        items: list[OutputItem] = []
        for entry in found:
            items.extend(self._message(entry))
        return items, consumed

    def _message(self, entry: Mapping[str, object]) -> list[OutputItem]:
        kind, key, ts = entry.get("type"), entry.get("id"), str(entry.get("timestamp", ""))
        if not isinstance(key, str):
            return []
        if kind == "user":
            text = _text(entry.get("content"))
            prompt = text.strip() and not text.startswith(_CONTEXT) and _remember(self._said, key)
            return [OutputItem("prompt", "", ts=ts)] if prompt else []
        if kind != "gemini":
            return []
        tokens = context_tokens(entry.get("tokens"))
        items = []
        text = _text(entry.get("content")).strip()
        if text and _remember(self._said, key):
            items.append(OutputItem("text", text, ts=ts, tokens=tokens))
        calls = entry.get("toolCalls")
        for call in calls if isinstance(calls, list) else []:
            if (
                isinstance(call, dict)
                and isinstance(call.get("id"), str)
                and _remember(self._calls, call["id"])
            ):
                items += _call_items(call, ts, tokens)
        return items


def _call_items(call: Mapping[str, object], ts: str, tokens: int | None) -> list[OutputItem]:
    name = str(call.get("name", ""))
    args = call.get("args") if isinstance(call.get("args"), dict) else {}
    assert isinstance(args, dict)
    shown = TOOL_NAMES.get(name, name)
    used = OutputItem("tool_use", tool_use_text(shown, args), shown, ts=ts, tokens=tokens)
    done = str(call.get("timestamp") or ts)
    return [used, OutputItem("tool_result", result_text(call), shown, ts=done)]


def turn_end(data: bytes) -> tuple[str, str]:
    """(answer, error) of the turn a chat log (or its tail, from a line's start) ends with. The answer is
    the text of its last message with text since the person's last prompt, whole as Gemini CLI keeps it
    ("" when it has none yet): AfterAgent's `prompt_response` is no such thing under a streamed answer
    (0.61.0 adds the stream's pieces to it again, spaced: "…THE GOAL o r k i n g …"). The error is the
    API error that ended the turn, when the last thing written since that prompt is an `error` entry
    ("[API Error: You have exhausted your daily quota on this model.]\nPlease wait…"), for which 0.61.0
    hands AfterAgent only "[no response text]"."""
    found, _ = entries(data)
    answer, error = "", ""
    for entry in found:
        kind, text = entry.get("type"), _text(entry.get("content")).strip()
        if kind == "user" and text and not text.startswith(_CONTEXT):
            answer, error = "", ""
        elif kind == "gemini":
            answer, error = text or answer, ""
        elif kind == "error" and text:
            error = text
    return answer, error


def _remember(seen: dict[str, None], key: str) -> bool:
    """Whether `key` is new (and now remembered); the oldest are forgotten past MAX_PENDING."""
    if key in seen:
        return False
    seen[key] = None
    while len(seen) > MAX_PENDING:
        del seen[next(iter(seen))]
    return True


def context_tokens(tokens: object) -> int | None:
    """The context's size after one answer: what the model read (cached included) and wrote."""
    if not isinstance(tokens, dict):
        return None
    keys = ("input", "output", "thoughts", "tool")
    return sum(token_count(tokens.get(key)) for key in keys) or None
