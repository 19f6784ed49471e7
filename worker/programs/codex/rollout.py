"""Reading Codex CLI's session log (its "rollout", `$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl`, one
JSON entry a line, appended as the session goes): the agent's output as `OutputItem`s and the tokens of
each model answer as `bus.costs.usage.Usage` (worker.programs.codex.usage). Pure.

What 0.169.0 writes (tests/fixtures/codex-0.169.0/rollout-two-turns.jsonl): `response_item` entries hold
the conversation as the Responses API has it (user and assistant messages, `function_call` /
`custom_tool_call` and their outputs), `turn_context` names the model of each turn, and one
`token_usage_record` per answer of the model carries its `response_id` and `usage`, where `input_tokens`
include the cached ones and `output_tokens` the reasoning. The hidden thread that names the session
writes no log, so its tokens are not counted.

It records the plan's usage limit too (`recorded_limit`; the fixture rollout-usage-limit.jsonl beside
that one): each model request leaves an `event_msg` of type `token_count` whose `rate_limits` hold the API's
`x-codex-primary-*` / `x-codex-secondary-*` headers, `used_percent`, `window_minutes` and `resets_at`
(epoch seconds, from `x-codex-primary-reset-at`). 0.169.0 takes the reset from that header and from the
error's `resets_at`; it ignores the `resets_in_seconds` and `…-reset-after-seconds` the API sends beside
them (then its screen says only "try again later" and the rollout's `resets_at` is null).
"""

from __future__ import annotations

from bus.costs.usage_limits import RecordedLimit, reset_from_header, window_of_minutes
from bus.wire import fastjson
from worker.programs.claude.transcript import MAX_PENDING, shorten, tool_use_text
from worker.programs.jsonl import entries
from worker.programs.output import OutputItem
from worker.programs.usage_lines import token_count

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

# Codex's tool names as the output shows them (the names Claude Code's tools have for the same job, which
# Codex's own hooks use too); tools not listed keep their own name
TOOL_NAMES = {"exec_command": "Bash", "shell": "Bash", "apply_patch": "Patch"}
ANSWER_KINDS = ("text", "tool_use")  # the items a model answer is made of (its usage names their context)
_EXIT_LINES = ("Process exited with code", "Exit code:")  # how an output says the command's exit status
_PATCH_FILE = ("*** Add File: ", "*** Update File: ", "*** Delete File: ")


def _texts(content: object, kind: str) -> str:
    """The text of a message's `content` blocks of `kind` (input_text, output_text)."""
    if not isinstance(content, list):
        return ""
    return "\n".join(str(b.get("text", "")) for b in content if isinstance(b, dict) and b.get("type") == kind)


def patch_files(patch: str) -> list[str]:
    """The files an `apply_patch` input names, in order."""
    return [line.split(": ", 1)[1] for line in patch.splitlines() if line.startswith(_PATCH_FILE)]


def _patch_counts(patch: str) -> tuple[int, int]:
    lines = [line for line in patch.splitlines() if not line.startswith("***")]
    return sum(line.startswith("+") for line in lines), sum(line.startswith("-") for line in lines)


def tool_input(name: str, payload: Mapping[str, object]) -> dict[str, object]:
    """What a call works on: exec_command's JSON arguments, apply_patch's patch (as `patch` and its
    first file as `file_path`)."""
    if payload.get("type") == "custom_tool_call":
        given = str(payload.get("input", ""))
        files = patch_files(given) if name == "apply_patch" else []
        return {"file_path": ", ".join(files), "patch": given} if files else {"input": given}
    try:
        arguments = fastjson.loads(str(payload.get("arguments", "")))
    except (ValueError, SystemError):
        return {}
    if isinstance(arguments, dict) and isinstance(arguments.get("cmd"), str):
        arguments = {"command": arguments["cmd"], **arguments}
    return arguments if isinstance(arguments, dict) else {}


def summarize_output(name: str, args: Mapping[str, object], output: str) -> str:
    """One line for a call's output: `Output 3 lines` (or `Error: exit 2`) for a command, `Added 2,
    removed 0` for a patch, else its first line."""
    head, _, body = output.partition("Output:\n")
    codes = [line.rsplit(" ", 1)[-1] for line in head.splitlines() if line.startswith(_EXIT_LINES)]
    code = codes[0] if codes else "0"
    if code != "0":
        first = next((line.strip() for line in body.splitlines() if line.strip()), "")
        return f"Error: exit {code}" + (f": {shorten(first)}" if first else "")
    if name == "apply_patch":
        added, removed = _patch_counts(str(args.get("patch", "")))
        return f"Added {added}, removed {removed}"
    if name in ("exec_command", "shell"):
        count = len(body.strip("\n").splitlines())
        return f"Output {count} line" + ("" if count == 1 else "s")
    first = next((line.strip() for line in output.splitlines() if line.strip()), "")
    return shorten(first) if first else "Done"


class RolloutParser:
    """Reads a rollout fed in pieces (`TranscriptReading`), remembering each pending call's tool. The
    items since the last answer get that answer's context size, when its usage comes in the same piece."""

    def __init__(self) -> None:
        self._pending: dict[str, tuple[str, dict[str, object]]] = {}
        self._cwd = ""

    def feed(self, data: bytes) -> tuple[list[OutputItem], int]:
        found, consumed = entries(data)
        items: list[OutputItem] = []
        since_usage = 0
        for entry in found:
            payload = entry.get("payload")
            if not isinstance(payload, dict):
                continue
            if entry.get("type") == "turn_context" and isinstance(payload.get("cwd"), str):
                self._cwd = str(payload["cwd"])
            elif entry.get("type") == "token_usage_record":
                tokens = context_tokens(payload.get("usage"))
                for at in range(since_usage, len(items)):
                    if items[at].kind in ANSWER_KINDS:
                        items[at] = _with_tokens(items[at], tokens)
                since_usage = len(items)
            elif entry.get("type") == "response_item":
                items.extend(self._item(payload, str(entry.get("timestamp", ""))))
            elif entry.get("type") == "event_msg" and _is_prompt(payload):
                items.append(OutputItem("prompt", "", ts=str(entry.get("timestamp", ""))))
        return items, consumed

    def _item(self, payload: Mapping[str, object], ts: str) -> list[OutputItem]:
        kind = payload.get("type")
        if kind == "message":
            role = payload.get("role")
            text = _texts(payload.get("content"), "output_text").strip() if role == "assistant" else ""
            return [OutputItem("text", text, ts=ts)] if text else []
        call_id = payload.get("call_id")
        if not isinstance(call_id, str):
            return []
        if kind in ("function_call", "custom_tool_call") and isinstance(payload.get("name"), str):
            name = str(payload["name"])
            args = tool_input(name, payload)
            self._remember(call_id, name, args)
            shown = TOOL_NAMES.get(name, name)
            return [OutputItem("tool_use", tool_use_text(shown, args, self._cwd), shown, ts=ts)]
        if kind in ("function_call_output", "custom_tool_call_output"):
            name, args = self._pending.pop(call_id, ("", {}))
            text = summarize_output(name, args, _output_text(payload.get("output")))
            return [OutputItem("tool_result", text, TOOL_NAMES.get(name, name) or None, ts=ts)]
        return []

    def _remember(self, call_id: str, name: str, args: dict[str, object]) -> None:
        self._pending[call_id] = (name, args)
        while len(self._pending) > MAX_PENDING:
            del self._pending[next(iter(self._pending))]


def _is_prompt(payload: Mapping[str, object]) -> bool:
    """A message the person (or ittybus) gave the agent: Codex notes it as a completed `UserMessage`
    item; the user messages it writes itself (its environment, instructions) have none."""
    item = payload.get("item")
    return (
        payload.get("type") == "item_completed"
        and isinstance(item, dict)
        and item.get("type") == "UserMessage"
    )


def _output_text(output: object) -> str:
    if isinstance(output, str):
        return output
    if isinstance(output, dict):  # older versions: {"output": "...", "metadata": {...}}
        return str(output.get("output", ""))
    return ""


def _with_tokens(item: OutputItem, tokens: int | None) -> OutputItem:
    from dataclasses import replace

    return item if tokens is None else replace(item, tokens=tokens)


def context_tokens(usage: object) -> int | None:
    """The context's size after one answer: what the model read (cached included) and wrote."""
    if not isinstance(usage, dict):
        return None
    counted = token_count(usage.get("input_tokens")) + token_count(usage.get("output_tokens"))
    return counted or None


FULL = 100.0  # used_percent of a window that ran out


def recorded_limit(entries: Iterable[Mapping[str, object]]) -> RecordedLimit | None:
    """The window that ran out in the rollout's last turn (its entries after the last `task_started`) and
    its reset; the later one when both ran out; None when no window of that turn is used up with a reset."""
    found: RecordedLimit | None = None
    for entry in entries:
        payload = entry.get("payload")
        if entry.get("type") != "event_msg" or not isinstance(payload, dict):
            continue
        if payload.get("type") == "task_started":
            found = None
        elif payload.get("type") == "token_count":
            found = _used_up(payload.get("rate_limits")) or found
    return found


def _used_up(rate_limits: object) -> RecordedLimit | None:
    windows = [rate_limits.get(k) for k in ("primary", "secondary")] if isinstance(rate_limits, dict) else []
    found = [
        RecordedLimit(at, window_of_minutes(w.get("window_minutes")))
        for w in windows
        if isinstance(w, dict)
        and _percent(w.get("used_percent")) >= FULL
        and (at := reset_from_header(w.get("resets_at"))) is not None
    ]
    return max(found, key=lambda limit: limit.reset_at) if found else None


def _percent(value: object) -> float:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0.0
